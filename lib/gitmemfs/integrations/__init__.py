"""Front ends inside other programs (a layer beside cli):

    anthropic.py  GitMemoryTool / AsyncGitMemoryTool for the Anthropic Python SDK
"""
