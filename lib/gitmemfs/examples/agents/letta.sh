#!/bin/sh
# Letta Code as the `git dream` agent.
#
#   git config dream.agent "sh $(git memory help --example agents/letta.sh)"
#   git config --add dream.sandbox.allowWrite ~/.letta        # its settings and local state
#   git config --add dream.passEnv LETTA_API_KEY              # if it logs in with an API key
#
# What it reads besides its checkout (git dream grants these when it runs this file;
# never the agents' memories in ~/.letta/agents, only this memory's own pieces):
# dream.sandbox.allowRead: ~/.letta
# dream.sandbox.programs: letta
#
# git dream withholds $LETTA_API_KEY from agents by default (it is also the token of a
# Letta memory remote); name it in dream.passEnv when Letta Code authenticates with it.
# `letta -p` reads the prompt from stdin; --yolo lets it run shell commands without
# asking (nobody is there to answer). Letta's own subagent sandbox (bubblewrap) cannot
# start inside git dream's Landlock domain, hence LETTA_FS_SANDBOX=0 for this run:
# the Landlock sandbox around it stays on.
set -eu
LETTA_FS_SANDBOX=0 exec letta -p --yolo
