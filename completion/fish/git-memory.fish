# Generated from the git-memory parser by tools/make_completion.py; do not edit.
complete -c git-memory -f -n '__fish_use_subcommand' -a create -d 'create a memory file (fails if it exists)'
complete -c git-memory -f -n '__fish_use_subcommand' -a str_replace -d 'replace text in a file\'s body (must match once unless --all)'
complete -c git-memory -f -n '__fish_use_subcommand' -a str-replace -d ''
complete -c git-memory -f -n '__fish_use_subcommand' -a insert -d 'insert text so it starts at body line LINE (1-indexed; past the end appends)'
complete -c git-memory -f -n '__fish_use_subcommand' -a delete -d 'delete a memory file, or a folder recursively (PATH/)'
complete -c git-memory -f -n '__fish_use_subcommand' -a rename -d 'move a memory file or folder (the destination must not exist)'
complete -c git-memory -f -n '__fish_use_subcommand' -a update_description -d 'change a file\'s frontmatter description'
complete -c git-memory -f -n '__fish_use_subcommand' -a update-description -d ''
complete -c git-memory -f -n '__fish_use_subcommand' -a call -d 'run one memory tool call given as JSON; always answers in JSON'
complete -c git-memory -f -n '__fish_use_subcommand' -a view -d 'print a memory file, or list a folder'
complete -c git-memory -f -n '__fish_use_subcommand' -a init -d 'create a memory repository (or adopt a repo)'
complete -c git-memory -f -n '__fish_use_subcommand' -a check -d 'validate memory files: staged, the whole tree, or a commit range'
complete -c git-memory -f -n '__fish_use_subcommand' -a hooks -d 'install or inspect the git hooks'
complete -c git-memory -f -n '__fish_use_subcommand' -a mirror -d 'configure the post-commit mirror push'
complete -c git-memory -f -n '__fish_use_subcommand' -a clone -d 'clone a memory repository'
complete -c git-memory -f -n '__fish_use_subcommand' -a sync -d 'fetch, then pull or push as needed'
complete -c git-memory -f -n '__fish_use_subcommand' -a status -d 'clean/dirty, ahead/behind, hooks and mirror'
complete -c git-memory -f -n '__fish_use_subcommand' -a compile -d 'print the system-prompt projection of the memory'
complete -c git-memory -f -n '__fish_use_subcommand' -a tree -d 'print the memory tree with its caps'
complete -c git-memory -f -n '__fish_use_subcommand' -a tokens -d 'estimate the prompt tokens of the memory'
complete -c git-memory -f -n '__fish_use_subcommand' -a config -d 'the settings in effect here, and where each comes from'
complete -c git-memory -f -n '__fish_use_subcommand' -a protect -d 'protect files from agent edits (a person\'s command)'
complete -c git-memory -f -n '__fish_use_subcommand' -a unprotect -d 'lift that protection (a person\'s command)'
complete -c git-memory -f -n '__fish_use_subcommand' -a personality -d 'list, show or apply a personality'
complete -c git-memory -f -n '__fish_use_subcommand' -a redact -d 'take a string or a file out of every version (a person only)'
complete -c git-memory -f -n '__fish_use_subcommand' -a doctor -d 'audit the memory; exit 1 on problems'
complete -c git-memory -f -n '__fish_use_subcommand' -a proposals -d 'list, show, accept or reject what agents proposed (a person\'s command)'
complete -c git-memory -f -n '__fish_use_subcommand' -a mcp -d 'serve the memory to agents over MCP (Model Context Protocol)'
complete -c git-memory -f -n '__fish_use_subcommand' -a review -d 'review, accept and undo memory changes in a browser'
complete -c git-memory -f -n '__fish_use_subcommand' -a serve -d 'serve memories to a team\'s agents over git HTTP'
complete -c git-memory -f -n '__fish_use_subcommand' -a install -d 'wire the memory into Claude Code\'s or Codex\'s own loop'
complete -c git-memory -f -n '__fish_use_subcommand' -a uninstall -d 'take out what install wrote (files back as they were)'
complete -c git-memory -f -n '__fish_use_subcommand' -a hook -d 'the entry point installed hooks run (a harness event)'
complete -c git-memory -f -n '__fish_use_subcommand' -a search -d 'find what the memory knows: the best lines, ranked'
complete -c git-memory -f -n '__fish_use_subcommand' -a log -d 'the memory\'s commits: when, who, what and why'
complete -c git-memory -f -n '__fish_use_subcommand' -a show -d 'a memory file as it was at a revision'
complete -c git-memory -f -n '__fish_use_subcommand' -a diff -d 'what changed, frontmatter and body apart'
complete -c git-memory -f -n '__fish_use_subcommand' -a undo -d 'take back one commit or a whole dream, as a new commit'
complete -c git-memory -f -n '__fish_use_subcommand' -a restore -d 'bring back one file as it was at a revision'
complete -c git-memory -f -n '__fish_use_subcommand' -a help -d 'show help for git memory or one of its commands'
complete -c git-memory -n '__fish_use_subcommand' -s h -l help -d 'show this help message and exit'
complete -c git-memory -n '__fish_use_subcommand' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git-memory -n '__fish_use_subcommand' -l json -d 'print one JSON object on stdout, errors included'
complete -c git-memory -n '__fish_use_subcommand' -s q -l quiet -d 'print nothing on success'
complete -c git-memory -n '__fish_use_subcommand' -l version -d 'show program\'s version number and exit'
complete -c git-memory -n '__fish_seen_subcommand_from create' -s h -l help -d 'show this help message and exit'
complete -c git-memory -n '__fish_seen_subcommand_from create' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git-memory -n '__fish_seen_subcommand_from create' -l json -d 'print one JSON object on stdout, errors included'
complete -c git-memory -n '__fish_seen_subcommand_from create' -s q -l quiet -d 'print nothing on success'
complete -c git-memory -n '__fish_seen_subcommand_from create' -l propose -d 'do not apply the change: keep it as a proposal for a person to accept or reject (git memory proposals); for what only a person may change, such as a read_only file'
complete -c git-memory -n '__fish_seen_subcommand_from create' -s d -l description -d 'one-line description (frontmatter); required but for a letta-root MEMORY.md index, which has none' -r
complete -c git-memory -n '__fish_seen_subcommand_from create' -s m -l reason -d 'why this change is made; becomes the commit subject (required)' -r
complete -c git-memory -n '__fish_seen_subcommand_from str_replace' -s h -l help -d 'show this help message and exit'
complete -c git-memory -n '__fish_seen_subcommand_from str_replace' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git-memory -n '__fish_seen_subcommand_from str_replace' -l json -d 'print one JSON object on stdout, errors included'
complete -c git-memory -n '__fish_seen_subcommand_from str_replace' -s q -l quiet -d 'print nothing on success'
complete -c git-memory -n '__fish_seen_subcommand_from str_replace' -l propose -d 'do not apply the change: keep it as a proposal for a person to accept or reject (git memory proposals); for what only a person may change, such as a read_only file'
complete -c git-memory -n '__fish_seen_subcommand_from str_replace' -l all -d 'replace every occurrence'
complete -c git-memory -n '__fish_seen_subcommand_from str_replace' -s m -l reason -d 'why this change is made; becomes the commit subject (required)' -r
complete -c git-memory -n '__fish_seen_subcommand_from str-replace' -s h -l help -d 'show this help message and exit'
complete -c git-memory -n '__fish_seen_subcommand_from str-replace' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git-memory -n '__fish_seen_subcommand_from str-replace' -l json -d 'print one JSON object on stdout, errors included'
complete -c git-memory -n '__fish_seen_subcommand_from str-replace' -s q -l quiet -d 'print nothing on success'
complete -c git-memory -n '__fish_seen_subcommand_from str-replace' -l propose -d 'do not apply the change: keep it as a proposal for a person to accept or reject (git memory proposals); for what only a person may change, such as a read_only file'
complete -c git-memory -n '__fish_seen_subcommand_from str-replace' -l all -d 'replace every occurrence'
complete -c git-memory -n '__fish_seen_subcommand_from str-replace' -s m -l reason -d 'why this change is made; becomes the commit subject (required)' -r
complete -c git-memory -n '__fish_seen_subcommand_from insert' -s h -l help -d 'show this help message and exit'
complete -c git-memory -n '__fish_seen_subcommand_from insert' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git-memory -n '__fish_seen_subcommand_from insert' -l json -d 'print one JSON object on stdout, errors included'
complete -c git-memory -n '__fish_seen_subcommand_from insert' -s q -l quiet -d 'print nothing on success'
complete -c git-memory -n '__fish_seen_subcommand_from insert' -l propose -d 'do not apply the change: keep it as a proposal for a person to accept or reject (git memory proposals); for what only a person may change, such as a read_only file'
complete -c git-memory -n '__fish_seen_subcommand_from insert' -s m -l reason -d 'why this change is made; becomes the commit subject (required)' -r
complete -c git-memory -n '__fish_seen_subcommand_from delete' -s h -l help -d 'show this help message and exit'
complete -c git-memory -n '__fish_seen_subcommand_from delete' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git-memory -n '__fish_seen_subcommand_from delete' -l json -d 'print one JSON object on stdout, errors included'
complete -c git-memory -n '__fish_seen_subcommand_from delete' -s q -l quiet -d 'print nothing on success'
complete -c git-memory -n '__fish_seen_subcommand_from delete' -l propose -d 'do not apply the change: keep it as a proposal for a person to accept or reject (git memory proposals); for what only a person may change, such as a read_only file'
complete -c git-memory -n '__fish_seen_subcommand_from delete' -s m -l reason -d 'why this change is made; becomes the commit subject (required)' -r
complete -c git-memory -n '__fish_seen_subcommand_from rename' -s h -l help -d 'show this help message and exit'
complete -c git-memory -n '__fish_seen_subcommand_from rename' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git-memory -n '__fish_seen_subcommand_from rename' -l json -d 'print one JSON object on stdout, errors included'
complete -c git-memory -n '__fish_seen_subcommand_from rename' -s q -l quiet -d 'print nothing on success'
complete -c git-memory -n '__fish_seen_subcommand_from rename' -l propose -d 'do not apply the change: keep it as a proposal for a person to accept or reject (git memory proposals); for what only a person may change, such as a read_only file'
complete -c git-memory -n '__fish_seen_subcommand_from rename' -s m -l reason -d 'why this change is made; becomes the commit subject (required)' -r
complete -c git-memory -n '__fish_seen_subcommand_from update_description' -s h -l help -d 'show this help message and exit'
complete -c git-memory -n '__fish_seen_subcommand_from update_description' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git-memory -n '__fish_seen_subcommand_from update_description' -l json -d 'print one JSON object on stdout, errors included'
complete -c git-memory -n '__fish_seen_subcommand_from update_description' -s q -l quiet -d 'print nothing on success'
complete -c git-memory -n '__fish_seen_subcommand_from update_description' -l propose -d 'do not apply the change: keep it as a proposal for a person to accept or reject (git memory proposals); for what only a person may change, such as a read_only file'
complete -c git-memory -n '__fish_seen_subcommand_from update_description' -s m -l reason -d 'why this change is made; becomes the commit subject (required)' -r
complete -c git-memory -n '__fish_seen_subcommand_from update-description' -s h -l help -d 'show this help message and exit'
complete -c git-memory -n '__fish_seen_subcommand_from update-description' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git-memory -n '__fish_seen_subcommand_from update-description' -l json -d 'print one JSON object on stdout, errors included'
complete -c git-memory -n '__fish_seen_subcommand_from update-description' -s q -l quiet -d 'print nothing on success'
complete -c git-memory -n '__fish_seen_subcommand_from update-description' -l propose -d 'do not apply the change: keep it as a proposal for a person to accept or reject (git memory proposals); for what only a person may change, such as a read_only file'
complete -c git-memory -n '__fish_seen_subcommand_from update-description' -s m -l reason -d 'why this change is made; becomes the commit subject (required)' -r
complete -c git-memory -n '__fish_seen_subcommand_from call' -s h -l help -d 'show this help message and exit'
complete -c git-memory -n '__fish_seen_subcommand_from call' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git-memory -n '__fish_seen_subcommand_from call' -l json -d 'print one JSON object on stdout, errors included'
complete -c git-memory -n '__fish_seen_subcommand_from call' -s q -l quiet -d 'print nothing on success'
complete -c git-memory -n '__fish_seen_subcommand_from call' -l schema -d 'letta: upstream memory / memory_apply_patch (default); anthropic: Anthropic\'s memory tool under /memories' -r
complete -c git-memory -n '__fish_seen_subcommand_from call' -l propose -d 'propose every write of the call instead of applying it (as "propose": true does)'
complete -c git-memory -n '__fish_seen_subcommand_from call' -l adopt-outside-changes -d 'before a write, commit files changed beside the tools as their own commit (\'outside change\', your git identity) instead of refusing the write'
complete -c git-memory -n '__fish_seen_subcommand_from view' -s h -l help -d 'show this help message and exit'
complete -c git-memory -n '__fish_seen_subcommand_from view' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git-memory -n '__fish_seen_subcommand_from view' -l json -d 'print one JSON object on stdout, errors included'
complete -c git-memory -n '__fish_seen_subcommand_from view' -s q -l quiet -d 'print nothing on success'
complete -c git-memory -n '__fish_seen_subcommand_from view' -l range -d 'body lines A to B (B = -1: to the end)' -r
complete -c git-memory -n '__fish_seen_subcommand_from view' -s n -l line-numbers -d 'number the body lines'
complete -c git-memory -n '__fish_seen_subcommand_from init' -s h -l help -d 'show this help message and exit'
complete -c git-memory -n '__fish_seen_subcommand_from init' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git-memory -n '__fish_seen_subcommand_from init' -l json -d 'print one JSON object on stdout, errors included'
complete -c git-memory -n '__fish_seen_subcommand_from init' -s q -l quiet -d 'print nothing on success'
complete -c git-memory -n '__fish_seen_subcommand_from init' -l agent-id -d 'record memory.agentId (the commit author)' -r
complete -c git-memory -n '__fish_seen_subcommand_from init' -l agent-name -d 'record memory.agentName' -r
complete -c git-memory -n '__fish_seen_subcommand_from init' -l remote -d 'add URL as remote origin' -r
complete -c git-memory -n '__fish_seen_subcommand_from init' -l layout -d 'repository layout: letta (system/ folder, the default), letta-root (a root MEMORY.md index, current Letta) or plain (files as named, no required frontmatter; recorded as memory.layout)' -r
complete -c git-memory -n '__fish_seen_subcommand_from init' -l personality -d 'seed the persona and human files from a personality (git memory personality list)' -r
complete -c git-memory -n '__fish_seen_subcommand_from check' -s h -l help -d 'show this help message and exit'
complete -c git-memory -n '__fish_seen_subcommand_from check' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git-memory -n '__fish_seen_subcommand_from check' -l json -d 'print one JSON object on stdout, errors included'
complete -c git-memory -n '__fish_seen_subcommand_from check' -s q -l quiet -d 'print nothing on success'
complete -c git-memory -n '__fish_seen_subcommand_from check' -l staged -d 'check the staged changes against HEAD'
complete -c git-memory -n '__fish_seen_subcommand_from check' -l all -d 'check every file at HEAD (the default)'
complete -c git-memory -n '__fish_seen_subcommand_from check' -l tree -d 'check one committed tree alone, every problem of every file (default HEAD)' -r
complete -c git-memory -n '__fish_seen_subcommand_from check' -l format -d 'github: one ::error annotation per problem, for GitHub Actions' -r
complete -c git-memory -n '__fish_seen_subcommand_from hooks' -s h -l help -d 'show this help message and exit'
complete -c git-memory -n '__fish_seen_subcommand_from hooks' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git-memory -n '__fish_seen_subcommand_from hooks' -l json -d 'print one JSON object on stdout, errors included'
complete -c git-memory -n '__fish_seen_subcommand_from hooks' -s q -l quiet -d 'print nothing on success'
complete -c git-memory -n '__fish_seen_subcommand_from mirror' -s h -l help -d 'show this help message and exit'
complete -c git-memory -n '__fish_seen_subcommand_from mirror' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git-memory -n '__fish_seen_subcommand_from mirror' -l json -d 'print one JSON object on stdout, errors included'
complete -c git-memory -n '__fish_seen_subcommand_from mirror' -s q -l quiet -d 'print nothing on success'
complete -c git-memory -n '__fish_seen_subcommand_from clone' -s h -l help -d 'show this help message and exit'
complete -c git-memory -n '__fish_seen_subcommand_from clone' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git-memory -n '__fish_seen_subcommand_from clone' -l json -d 'print one JSON object on stdout, errors included'
complete -c git-memory -n '__fish_seen_subcommand_from clone' -s q -l quiet -d 'print nothing on success'
complete -c git-memory -n '__fish_seen_subcommand_from clone' -l letta-agent -d 'clone this Letta agent\'s memory repository' -r
complete -c git-memory -n '__fish_seen_subcommand_from clone' -l auth-scheme -d 'how to send the token (stored as memory.authScheme; default: basic)' -r
complete -c git-memory -n '__fish_seen_subcommand_from clone' -l layout -d 'the memory\'s layout, recorded as memory.layout (a clone cannot read the remote\'s config; a plain memory needs this)' -r
complete -c git-memory -n '__fish_seen_subcommand_from clone' -l branch -d 'the branch to check out (default: the server\'s HEAD, else main, else the only one)' -r
complete -c git-memory -n '__fish_seen_subcommand_from sync' -s h -l help -d 'show this help message and exit'
complete -c git-memory -n '__fish_seen_subcommand_from sync' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git-memory -n '__fish_seen_subcommand_from sync' -l json -d 'print one JSON object on stdout, errors included'
complete -c git-memory -n '__fish_seen_subcommand_from sync' -s q -l quiet -d 'print nothing on success'
complete -c git-memory -n '__fish_seen_subcommand_from sync' -l deadline -d 'how long to keep retrying a push others\' pushes refused (default: memory.syncDeadline, else 60)' -r
complete -c git-memory -n '__fish_seen_subcommand_from status' -s h -l help -d 'show this help message and exit'
complete -c git-memory -n '__fish_seen_subcommand_from status' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git-memory -n '__fish_seen_subcommand_from status' -l json -d 'print one JSON object on stdout, errors included'
complete -c git-memory -n '__fish_seen_subcommand_from status' -s q -l quiet -d 'print nothing on success'
complete -c git-memory -n '__fish_seen_subcommand_from compile' -s h -l help -d 'show this help message and exit'
complete -c git-memory -n '__fish_seen_subcommand_from compile' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git-memory -n '__fish_seen_subcommand_from compile' -l json -d 'print one JSON object on stdout, errors included'
complete -c git-memory -n '__fish_seen_subcommand_from compile' -s q -l quiet -d 'print nothing on success'
complete -c git-memory -n '__fish_seen_subcommand_from compile' -l rev -d 'the commit to read (default HEAD)' -r
complete -c git-memory -n '__fish_seen_subcommand_from compile' -l compat -d 'letta: byte-exact Letta Code 0.30.25 output, its bugs included (non-ASCII names dropped, continuation lines not indented, no descriptions in the index)' -r
complete -c git-memory -n '__fish_seen_subcommand_from compile' -l absolute -d 'write the repository\'s absolute path instead of $MEMORY_DIR'
complete -c git-memory -n '__fish_seen_subcommand_from tree' -s h -l help -d 'show this help message and exit'
complete -c git-memory -n '__fish_seen_subcommand_from tree' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git-memory -n '__fish_seen_subcommand_from tree' -l json -d 'print one JSON object on stdout, errors included'
complete -c git-memory -n '__fish_seen_subcommand_from tree' -s q -l quiet -d 'print nothing on success'
complete -c git-memory -n '__fish_seen_subcommand_from tree' -l rev -d 'the commit to read (default HEAD)' -r
complete -c git-memory -n '__fish_seen_subcommand_from tree' -l max-lines -d 'line budget (at least 2)' -r
complete -c git-memory -n '__fish_seen_subcommand_from tree' -l max-chars -d 'character budget (at least 128)' -r
complete -c git-memory -n '__fish_seen_subcommand_from tree' -l max-children -d 'entries shown per folder (at least 1)' -r
complete -c git-memory -n '__fish_seen_subcommand_from tree' -l compat -d 'letta: only .md files, as Letta Code\'s renderer shows memory blocks' -r
complete -c git-memory -n '__fish_seen_subcommand_from tokens' -s h -l help -d 'show this help message and exit'
complete -c git-memory -n '__fish_seen_subcommand_from tokens' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git-memory -n '__fish_seen_subcommand_from tokens' -l json -d 'print one JSON object on stdout, errors included'
complete -c git-memory -n '__fish_seen_subcommand_from tokens' -s q -l quiet -d 'print nothing on success'
complete -c git-memory -n '__fish_seen_subcommand_from tokens' -l rev -d 'the commit to read (default HEAD)' -r
complete -c git-memory -n '__fish_seen_subcommand_from tokens' -l top -d 'files to list (default 20; 0: none)' -r
complete -c git-memory -n '__fish_seen_subcommand_from tokens' -l budget -d 'fail (exit 1) when the total exceeds N tokens' -r
complete -c git-memory -n '__fish_seen_subcommand_from config' -s h -l help -d 'show this help message and exit'
complete -c git-memory -n '__fish_seen_subcommand_from config' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git-memory -n '__fish_seen_subcommand_from config' -l json -d 'print one JSON object on stdout, errors included'
complete -c git-memory -n '__fish_seen_subcommand_from config' -s q -l quiet -d 'print nothing on success'
complete -c git-memory -n '__fish_seen_subcommand_from protect' -s h -l help -d 'show this help message and exit'
complete -c git-memory -n '__fish_seen_subcommand_from protect' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git-memory -n '__fish_seen_subcommand_from protect' -l json -d 'print one JSON object on stdout, errors included'
complete -c git-memory -n '__fish_seen_subcommand_from protect' -s q -l quiet -d 'print nothing on success'
complete -c git-memory -n '__fish_seen_subcommand_from protect' -s m -l reason -d 'why (the commit message)' -r
complete -c git-memory -n '__fish_seen_subcommand_from protect' -s S -l sign -d 'sign the commit with your key (git\'s user.signingKey, gpg.format)'
complete -c git-memory -n '__fish_seen_subcommand_from unprotect' -s h -l help -d 'show this help message and exit'
complete -c git-memory -n '__fish_seen_subcommand_from unprotect' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git-memory -n '__fish_seen_subcommand_from unprotect' -l json -d 'print one JSON object on stdout, errors included'
complete -c git-memory -n '__fish_seen_subcommand_from unprotect' -s q -l quiet -d 'print nothing on success'
complete -c git-memory -n '__fish_seen_subcommand_from unprotect' -s m -l reason -d 'why (the commit message)' -r
complete -c git-memory -n '__fish_seen_subcommand_from unprotect' -s S -l sign -d 'sign the commit with your key (git\'s user.signingKey, gpg.format)'
complete -c git-memory -n '__fish_seen_subcommand_from personality' -s h -l help -d 'show this help message and exit'
complete -c git-memory -n '__fish_seen_subcommand_from personality' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git-memory -n '__fish_seen_subcommand_from personality' -l json -d 'print one JSON object on stdout, errors included'
complete -c git-memory -n '__fish_seen_subcommand_from personality' -s q -l quiet -d 'print nothing on success'
complete -c git-memory -n '__fish_seen_subcommand_from redact' -s h -l help -d 'show this help message and exit'
complete -c git-memory -n '__fish_seen_subcommand_from redact' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git-memory -n '__fish_seen_subcommand_from redact' -l json -d 'print one JSON object on stdout, errors included'
complete -c git-memory -n '__fish_seen_subcommand_from redact' -s q -l quiet -d 'print nothing on success'
complete -c git-memory -n '__fish_seen_subcommand_from redact' -l text-file -d 'the strings, one per line (\'-\': standard input)' -r
complete -c git-memory -n '__fish_seen_subcommand_from redact' -l path -d 'a file or folder to remove from every version (repeatable)' -r
complete -c git-memory -n '__fish_seen_subcommand_from redact' -l dry-run -d 'list the commits, files and refs that would change and count the occurrences'
complete -c git-memory -n '__fish_seen_subcommand_from redact' -l push -d 'then send the new history to the upstream remote and the mirror (--force-with-lease on what each has, catching up with commits pushed meanwhile: the one force push this toolkit makes)'
complete -c git-memory -n '__fish_seen_subcommand_from redact' -s m -l reason -d 'the record commit\'s subject' -r
complete -c git-memory -n '__fish_seen_subcommand_from doctor' -s h -l help -d 'show this help message and exit'
complete -c git-memory -n '__fish_seen_subcommand_from doctor' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git-memory -n '__fish_seen_subcommand_from doctor' -l json -d 'print one JSON object on stdout, errors included'
complete -c git-memory -n '__fish_seen_subcommand_from doctor' -s q -l quiet -d 'print nothing on success'
complete -c git-memory -n '__fish_seen_subcommand_from doctor' -l rev -d 'the commit to audit (default HEAD)' -r
complete -c git-memory -n '__fish_seen_subcommand_from proposals' -s h -l help -d 'show this help message and exit'
complete -c git-memory -n '__fish_seen_subcommand_from proposals' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git-memory -n '__fish_seen_subcommand_from proposals' -l json -d 'print one JSON object on stdout, errors included'
complete -c git-memory -n '__fish_seen_subcommand_from proposals' -s q -l quiet -d 'print nothing on success'
complete -c git-memory -n '__fish_seen_subcommand_from mcp' -s h -l help -d 'show this help message and exit'
complete -c git-memory -n '__fish_seen_subcommand_from mcp' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git-memory -n '__fish_seen_subcommand_from mcp' -l json -d 'print one JSON object on stdout, errors included'
complete -c git-memory -n '__fish_seen_subcommand_from mcp' -s q -l quiet -d 'print nothing on success'
complete -c git-memory -n '__fish_seen_subcommand_from mcp' -l http -d 'serve streamable HTTP instead of stdio'
complete -c git-memory -n '__fish_seen_subcommand_from mcp' -l host -d 'address to listen on (default 127.0.0.1; any other needs $GIT_MEMORY_MCP_TOKEN)' -r
complete -c git-memory -n '__fish_seen_subcommand_from mcp' -l port -d 'port (default 8765; 0: any free port)' -r
complete -c git-memory -n '__fish_seen_subcommand_from mcp' -l root -d 'serve every agent\'s memory under DIR (DIR/<agent>[/memory]); calls name the agent' -r
complete -c git-memory -n '__fish_seen_subcommand_from mcp' -l adopt-outside-changes -d 'before a write, commit files changed beside the server as their own \'outside change\' commit (validated like any) instead of refusing the write (off by default)'
complete -c git-memory -n '__fish_seen_subcommand_from mcp' -l tokens -d 'with --http --root: lines \'AGENT TOKEN\' (chmod 600); a client sees and touches only the agents its bearer token is listed for (\'*\': every agent)' -r
complete -c git-memory -n '__fish_seen_subcommand_from review' -s h -l help -d 'show this help message and exit'
complete -c git-memory -n '__fish_seen_subcommand_from review' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git-memory -n '__fish_seen_subcommand_from review' -l json -d 'print one JSON object on stdout, errors included'
complete -c git-memory -n '__fish_seen_subcommand_from review' -s q -l quiet -d 'print nothing on success'
complete -c git-memory -n '__fish_seen_subcommand_from review' -l port -d 'port (default 0: any free port; the URL says which)' -r
complete -c git-memory -n '__fish_seen_subcommand_from review' -l host -d 'address to listen on (default 127.0.0.1; any other needs $GIT_MEMORY_REVIEW_TOKEN)' -r
complete -c git-memory -n '__fish_seen_subcommand_from review' -l root -d 'serve every agent\'s memory under DIR (DIR/<agent>[/memory])' -r
complete -c git-memory -n '__fish_seen_subcommand_from review' -l no-browser -d 'print the URL; do not open a browser'
complete -c git-memory -n '__fish_seen_subcommand_from serve' -s h -l help -d 'show this help message and exit'
complete -c git-memory -n '__fish_seen_subcommand_from serve' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git-memory -n '__fish_seen_subcommand_from serve' -l json -d 'print one JSON object on stdout, errors included'
complete -c git-memory -n '__fish_seen_subcommand_from serve' -s q -l quiet -d 'print nothing on success'
complete -c git-memory -n '__fish_seen_subcommand_from serve' -l root -d 'the folder of memories (DIR/<name>.git)' -r
complete -c git-memory -n '__fish_seen_subcommand_from serve' -l host -d 'address to listen on (default 127.0.0.1)' -r
complete -c git-memory -n '__fish_seen_subcommand_from serve' -l port -d 'port (default 0: any free port; the URL says which)' -r
complete -c git-memory -n '__fish_seen_subcommand_from serve' -l layout -d 'the layout of memories made on first use (default letta)' -r
complete -c git-memory -n '__fish_seen_subcommand_from install' -s h -l help -d 'show this help message and exit'
complete -c git-memory -n '__fish_seen_subcommand_from install' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git-memory -n '__fish_seen_subcommand_from install' -l json -d 'print one JSON object on stdout, errors included'
complete -c git-memory -n '__fish_seen_subcommand_from install' -s q -l quiet -d 'print nothing on success'
complete -c git-memory -n '__fish_seen_subcommand_from install' -l user -d 'the user\'s settings (default)'
complete -c git-memory -n '__fish_seen_subcommand_from install' -l project -d 'claude-code: this project\'s .claude/settings.local.json and .mcp.json'
complete -c git-memory -n '__fish_seen_subcommand_from install' -l name -d 'the MCP server\'s name (default memory)' -r
complete -c git-memory -n '__fish_seen_subcommand_from install' -l dry-run -d 'print what would change; change nothing'
complete -c git-memory -n '__fish_seen_subcommand_from uninstall' -s h -l help -d 'show this help message and exit'
complete -c git-memory -n '__fish_seen_subcommand_from uninstall' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git-memory -n '__fish_seen_subcommand_from uninstall' -l json -d 'print one JSON object on stdout, errors included'
complete -c git-memory -n '__fish_seen_subcommand_from uninstall' -s q -l quiet -d 'print nothing on success'
complete -c git-memory -n '__fish_seen_subcommand_from uninstall' -l user -d 'the user\'s settings (default)'
complete -c git-memory -n '__fish_seen_subcommand_from uninstall' -l project -d 'claude-code: this project\'s .claude/settings.local.json and .mcp.json'
complete -c git-memory -n '__fish_seen_subcommand_from uninstall' -l name -d 'the MCP server\'s name (default memory)' -r
complete -c git-memory -n '__fish_seen_subcommand_from uninstall' -l dry-run -d 'print what would change; change nothing'
complete -c git-memory -n '__fish_seen_subcommand_from hook' -s h -l help -d 'show this help message and exit'
complete -c git-memory -n '__fish_seen_subcommand_from hook' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git-memory -n '__fish_seen_subcommand_from hook' -l json -d 'print one JSON object on stdout, errors included'
complete -c git-memory -n '__fish_seen_subcommand_from hook' -s q -l quiet -d 'print nothing on success'
complete -c git-memory -n '__fish_seen_subcommand_from search' -s h -l help -d 'show this help message and exit'
complete -c git-memory -n '__fish_seen_subcommand_from search' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git-memory -n '__fish_seen_subcommand_from search' -l json -d 'print one JSON object on stdout, errors included'
complete -c git-memory -n '__fish_seen_subcommand_from search' -s q -l quiet -d 'print nothing on success'
complete -c git-memory -n '__fish_seen_subcommand_from search' -l regex -d 'QUERY is a Perl-style regular expression (time-bounded: memory.regexTimeout)'
complete -c git-memory -n '__fish_seen_subcommand_from search' -l in -d 'where to look (default: all)' -r
complete -c git-memory -n '__fish_seen_subcommand_from search' -l rev -d 'search the memory as it was at REV' -r
complete -c git-memory -n '__fish_seen_subcommand_from search' -l history -d 'search every past version too: finds deleted and overwritten facts'
complete -c git-memory -n '__fish_seen_subcommand_from search' -l limit -d 'files shown (default 20)' -r
complete -c git-memory -n '__fish_seen_subcommand_from search' -l lines -d 'matching lines shown per file, best first, each with a line of context (default 3)' -r
complete -c git-memory -n '__fish_seen_subcommand_from search' -l budget -d 'the best passages that fit in about this many tokens (default: 4000)' -r
complete -c git-memory -n '__fish_seen_subcommand_from search' -l pinned -d 'pinned files (system/, already in the prompt): ranked on merit (default), listed first, or left out' -r
complete -c git-memory -n '__fish_seen_subcommand_from log' -s h -l help -d 'show this help message and exit'
complete -c git-memory -n '__fish_seen_subcommand_from log' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git-memory -n '__fish_seen_subcommand_from log' -l json -d 'print one JSON object on stdout, errors included'
complete -c git-memory -n '__fish_seen_subcommand_from log' -s q -l quiet -d 'print nothing on success'
complete -c git-memory -n '__fish_seen_subcommand_from log' -s n -l max-count -d 'at most N commits' -r
complete -c git-memory -n '__fish_seen_subcommand_from log' -l since -d 'commits newer than DATE (\'2 weeks ago\', 2026-01-31)' -r
complete -c git-memory -n '__fish_seen_subcommand_from log' -l op -d 'only this operation (str_replace, delete, undo, ...)' -r
complete -c git-memory -n '__fish_seen_subcommand_from log' -l dreams -d 'only dream merges, with their ids and the commits they merged'
complete -c git-memory -n '__fish_seen_subcommand_from show' -s h -l help -d 'show this help message and exit'
complete -c git-memory -n '__fish_seen_subcommand_from show' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git-memory -n '__fish_seen_subcommand_from show' -l json -d 'print one JSON object on stdout, errors included'
complete -c git-memory -n '__fish_seen_subcommand_from show' -s q -l quiet -d 'print nothing on success'
complete -c git-memory -n '__fish_seen_subcommand_from show' -l rev -r
complete -c git-memory -n '__fish_seen_subcommand_from diff' -s h -l help -d 'show this help message and exit'
complete -c git-memory -n '__fish_seen_subcommand_from diff' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git-memory -n '__fish_seen_subcommand_from diff' -l json -d 'print one JSON object on stdout, errors included'
complete -c git-memory -n '__fish_seen_subcommand_from diff' -s q -l quiet -d 'print nothing on success'
complete -c git-memory -n '__fish_seen_subcommand_from undo' -s h -l help -d 'show this help message and exit'
complete -c git-memory -n '__fish_seen_subcommand_from undo' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git-memory -n '__fish_seen_subcommand_from undo' -l json -d 'print one JSON object on stdout, errors included'
complete -c git-memory -n '__fish_seen_subcommand_from undo' -s q -l quiet -d 'print nothing on success'
complete -c git-memory -n '__fish_seen_subcommand_from undo' -l last -d 'the newest commit (HEAD)'
complete -c git-memory -n '__fish_seen_subcommand_from undo' -l dream -d 'the merge of dream ID (git memory log --dreams)' -r
complete -c git-memory -n '__fish_seen_subcommand_from undo' -s m -l reason -d 'why this change is made; becomes the commit subject (required)' -r
complete -c git-memory -n '__fish_seen_subcommand_from undo' -l dry-run -d 'show the diff it would commit; change nothing'
complete -c git-memory -n '__fish_seen_subcommand_from restore' -s h -l help -d 'show this help message and exit'
complete -c git-memory -n '__fish_seen_subcommand_from restore' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git-memory -n '__fish_seen_subcommand_from restore' -l json -d 'print one JSON object on stdout, errors included'
complete -c git-memory -n '__fish_seen_subcommand_from restore' -s q -l quiet -d 'print nothing on success'
complete -c git-memory -n '__fish_seen_subcommand_from restore' -l rev -r
complete -c git-memory -n '__fish_seen_subcommand_from restore' -s m -l reason -d 'why this change is made; becomes the commit subject (required)' -r
complete -c git-memory -n '__fish_seen_subcommand_from restore' -l dry-run -d 'show the diff it would commit; change nothing'
complete -c git-memory -n '__fish_seen_subcommand_from help' -s h -l help -d 'show this help message and exit'
complete -c git-memory -n '__fish_seen_subcommand_from help' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git-memory -n '__fish_seen_subcommand_from help' -l json -d 'print one JSON object on stdout, errors included'
complete -c git-memory -n '__fish_seen_subcommand_from help' -s q -l quiet -d 'print nothing on success'
complete -c git-memory -n '__fish_seen_subcommand_from help' -l example -d 'print the path of an example file shipped with git-memfs (the docs\' session.jsonl, the dream agent recipes); without NAME, list them' -r
complete -c git -f -n '__fish_seen_subcommand_from memory' -a create -d 'create a memory file (fails if it exists)'
complete -c git -f -n '__fish_seen_subcommand_from memory' -a str_replace -d 'replace text in a file\'s body (must match once unless --all)'
complete -c git -f -n '__fish_seen_subcommand_from memory' -a str-replace -d ''
complete -c git -f -n '__fish_seen_subcommand_from memory' -a insert -d 'insert text so it starts at body line LINE (1-indexed; past the end appends)'
complete -c git -f -n '__fish_seen_subcommand_from memory' -a delete -d 'delete a memory file, or a folder recursively (PATH/)'
complete -c git -f -n '__fish_seen_subcommand_from memory' -a rename -d 'move a memory file or folder (the destination must not exist)'
complete -c git -f -n '__fish_seen_subcommand_from memory' -a update_description -d 'change a file\'s frontmatter description'
complete -c git -f -n '__fish_seen_subcommand_from memory' -a update-description -d ''
complete -c git -f -n '__fish_seen_subcommand_from memory' -a call -d 'run one memory tool call given as JSON; always answers in JSON'
complete -c git -f -n '__fish_seen_subcommand_from memory' -a view -d 'print a memory file, or list a folder'
complete -c git -f -n '__fish_seen_subcommand_from memory' -a init -d 'create a memory repository (or adopt a repo)'
complete -c git -f -n '__fish_seen_subcommand_from memory' -a check -d 'validate memory files: staged, the whole tree, or a commit range'
complete -c git -f -n '__fish_seen_subcommand_from memory' -a hooks -d 'install or inspect the git hooks'
complete -c git -f -n '__fish_seen_subcommand_from memory' -a mirror -d 'configure the post-commit mirror push'
complete -c git -f -n '__fish_seen_subcommand_from memory' -a clone -d 'clone a memory repository'
complete -c git -f -n '__fish_seen_subcommand_from memory' -a sync -d 'fetch, then pull or push as needed'
complete -c git -f -n '__fish_seen_subcommand_from memory' -a status -d 'clean/dirty, ahead/behind, hooks and mirror'
complete -c git -f -n '__fish_seen_subcommand_from memory' -a compile -d 'print the system-prompt projection of the memory'
complete -c git -f -n '__fish_seen_subcommand_from memory' -a tree -d 'print the memory tree with its caps'
complete -c git -f -n '__fish_seen_subcommand_from memory' -a tokens -d 'estimate the prompt tokens of the memory'
complete -c git -f -n '__fish_seen_subcommand_from memory' -a config -d 'the settings in effect here, and where each comes from'
complete -c git -f -n '__fish_seen_subcommand_from memory' -a protect -d 'protect files from agent edits (a person\'s command)'
complete -c git -f -n '__fish_seen_subcommand_from memory' -a unprotect -d 'lift that protection (a person\'s command)'
complete -c git -f -n '__fish_seen_subcommand_from memory' -a personality -d 'list, show or apply a personality'
complete -c git -f -n '__fish_seen_subcommand_from memory' -a redact -d 'take a string or a file out of every version (a person only)'
complete -c git -f -n '__fish_seen_subcommand_from memory' -a doctor -d 'audit the memory; exit 1 on problems'
complete -c git -f -n '__fish_seen_subcommand_from memory' -a proposals -d 'list, show, accept or reject what agents proposed (a person\'s command)'
complete -c git -f -n '__fish_seen_subcommand_from memory' -a mcp -d 'serve the memory to agents over MCP (Model Context Protocol)'
complete -c git -f -n '__fish_seen_subcommand_from memory' -a review -d 'review, accept and undo memory changes in a browser'
complete -c git -f -n '__fish_seen_subcommand_from memory' -a serve -d 'serve memories to a team\'s agents over git HTTP'
complete -c git -f -n '__fish_seen_subcommand_from memory' -a install -d 'wire the memory into Claude Code\'s or Codex\'s own loop'
complete -c git -f -n '__fish_seen_subcommand_from memory' -a uninstall -d 'take out what install wrote (files back as they were)'
complete -c git -f -n '__fish_seen_subcommand_from memory' -a hook -d 'the entry point installed hooks run (a harness event)'
complete -c git -f -n '__fish_seen_subcommand_from memory' -a search -d 'find what the memory knows: the best lines, ranked'
complete -c git -f -n '__fish_seen_subcommand_from memory' -a log -d 'the memory\'s commits: when, who, what and why'
complete -c git -f -n '__fish_seen_subcommand_from memory' -a show -d 'a memory file as it was at a revision'
complete -c git -f -n '__fish_seen_subcommand_from memory' -a diff -d 'what changed, frontmatter and body apart'
complete -c git -f -n '__fish_seen_subcommand_from memory' -a undo -d 'take back one commit or a whole dream, as a new commit'
complete -c git -f -n '__fish_seen_subcommand_from memory' -a restore -d 'bring back one file as it was at a revision'
complete -c git -f -n '__fish_seen_subcommand_from memory' -a help -d 'show help for git memory or one of its commands'
complete -c git -n '__fish_seen_subcommand_from memory' -s h -l help -d 'show this help message and exit'
complete -c git -n '__fish_seen_subcommand_from memory' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git -n '__fish_seen_subcommand_from memory' -l json -d 'print one JSON object on stdout, errors included'
complete -c git -n '__fish_seen_subcommand_from memory' -s q -l quiet -d 'print nothing on success'
complete -c git -n '__fish_seen_subcommand_from memory' -l version -d 'show program\'s version number and exit'
complete -c git -n '__fish_seen_subcommand_from create' -s h -l help -d 'show this help message and exit'
complete -c git -n '__fish_seen_subcommand_from create' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git -n '__fish_seen_subcommand_from create' -l json -d 'print one JSON object on stdout, errors included'
complete -c git -n '__fish_seen_subcommand_from create' -s q -l quiet -d 'print nothing on success'
complete -c git -n '__fish_seen_subcommand_from create' -l propose -d 'do not apply the change: keep it as a proposal for a person to accept or reject (git memory proposals); for what only a person may change, such as a read_only file'
complete -c git -n '__fish_seen_subcommand_from create' -s d -l description -d 'one-line description (frontmatter); required but for a letta-root MEMORY.md index, which has none' -r
complete -c git -n '__fish_seen_subcommand_from create' -s m -l reason -d 'why this change is made; becomes the commit subject (required)' -r
complete -c git -n '__fish_seen_subcommand_from str_replace' -s h -l help -d 'show this help message and exit'
complete -c git -n '__fish_seen_subcommand_from str_replace' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git -n '__fish_seen_subcommand_from str_replace' -l json -d 'print one JSON object on stdout, errors included'
complete -c git -n '__fish_seen_subcommand_from str_replace' -s q -l quiet -d 'print nothing on success'
complete -c git -n '__fish_seen_subcommand_from str_replace' -l propose -d 'do not apply the change: keep it as a proposal for a person to accept or reject (git memory proposals); for what only a person may change, such as a read_only file'
complete -c git -n '__fish_seen_subcommand_from str_replace' -l all -d 'replace every occurrence'
complete -c git -n '__fish_seen_subcommand_from str_replace' -s m -l reason -d 'why this change is made; becomes the commit subject (required)' -r
complete -c git -n '__fish_seen_subcommand_from str-replace' -s h -l help -d 'show this help message and exit'
complete -c git -n '__fish_seen_subcommand_from str-replace' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git -n '__fish_seen_subcommand_from str-replace' -l json -d 'print one JSON object on stdout, errors included'
complete -c git -n '__fish_seen_subcommand_from str-replace' -s q -l quiet -d 'print nothing on success'
complete -c git -n '__fish_seen_subcommand_from str-replace' -l propose -d 'do not apply the change: keep it as a proposal for a person to accept or reject (git memory proposals); for what only a person may change, such as a read_only file'
complete -c git -n '__fish_seen_subcommand_from str-replace' -l all -d 'replace every occurrence'
complete -c git -n '__fish_seen_subcommand_from str-replace' -s m -l reason -d 'why this change is made; becomes the commit subject (required)' -r
complete -c git -n '__fish_seen_subcommand_from insert' -s h -l help -d 'show this help message and exit'
complete -c git -n '__fish_seen_subcommand_from insert' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git -n '__fish_seen_subcommand_from insert' -l json -d 'print one JSON object on stdout, errors included'
complete -c git -n '__fish_seen_subcommand_from insert' -s q -l quiet -d 'print nothing on success'
complete -c git -n '__fish_seen_subcommand_from insert' -l propose -d 'do not apply the change: keep it as a proposal for a person to accept or reject (git memory proposals); for what only a person may change, such as a read_only file'
complete -c git -n '__fish_seen_subcommand_from insert' -s m -l reason -d 'why this change is made; becomes the commit subject (required)' -r
complete -c git -n '__fish_seen_subcommand_from delete' -s h -l help -d 'show this help message and exit'
complete -c git -n '__fish_seen_subcommand_from delete' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git -n '__fish_seen_subcommand_from delete' -l json -d 'print one JSON object on stdout, errors included'
complete -c git -n '__fish_seen_subcommand_from delete' -s q -l quiet -d 'print nothing on success'
complete -c git -n '__fish_seen_subcommand_from delete' -l propose -d 'do not apply the change: keep it as a proposal for a person to accept or reject (git memory proposals); for what only a person may change, such as a read_only file'
complete -c git -n '__fish_seen_subcommand_from delete' -s m -l reason -d 'why this change is made; becomes the commit subject (required)' -r
complete -c git -n '__fish_seen_subcommand_from rename' -s h -l help -d 'show this help message and exit'
complete -c git -n '__fish_seen_subcommand_from rename' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git -n '__fish_seen_subcommand_from rename' -l json -d 'print one JSON object on stdout, errors included'
complete -c git -n '__fish_seen_subcommand_from rename' -s q -l quiet -d 'print nothing on success'
complete -c git -n '__fish_seen_subcommand_from rename' -l propose -d 'do not apply the change: keep it as a proposal for a person to accept or reject (git memory proposals); for what only a person may change, such as a read_only file'
complete -c git -n '__fish_seen_subcommand_from rename' -s m -l reason -d 'why this change is made; becomes the commit subject (required)' -r
complete -c git -n '__fish_seen_subcommand_from update_description' -s h -l help -d 'show this help message and exit'
complete -c git -n '__fish_seen_subcommand_from update_description' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git -n '__fish_seen_subcommand_from update_description' -l json -d 'print one JSON object on stdout, errors included'
complete -c git -n '__fish_seen_subcommand_from update_description' -s q -l quiet -d 'print nothing on success'
complete -c git -n '__fish_seen_subcommand_from update_description' -l propose -d 'do not apply the change: keep it as a proposal for a person to accept or reject (git memory proposals); for what only a person may change, such as a read_only file'
complete -c git -n '__fish_seen_subcommand_from update_description' -s m -l reason -d 'why this change is made; becomes the commit subject (required)' -r
complete -c git -n '__fish_seen_subcommand_from update-description' -s h -l help -d 'show this help message and exit'
complete -c git -n '__fish_seen_subcommand_from update-description' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git -n '__fish_seen_subcommand_from update-description' -l json -d 'print one JSON object on stdout, errors included'
complete -c git -n '__fish_seen_subcommand_from update-description' -s q -l quiet -d 'print nothing on success'
complete -c git -n '__fish_seen_subcommand_from update-description' -l propose -d 'do not apply the change: keep it as a proposal for a person to accept or reject (git memory proposals); for what only a person may change, such as a read_only file'
complete -c git -n '__fish_seen_subcommand_from update-description' -s m -l reason -d 'why this change is made; becomes the commit subject (required)' -r
complete -c git -n '__fish_seen_subcommand_from call' -s h -l help -d 'show this help message and exit'
complete -c git -n '__fish_seen_subcommand_from call' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git -n '__fish_seen_subcommand_from call' -l json -d 'print one JSON object on stdout, errors included'
complete -c git -n '__fish_seen_subcommand_from call' -s q -l quiet -d 'print nothing on success'
complete -c git -n '__fish_seen_subcommand_from call' -l schema -d 'letta: upstream memory / memory_apply_patch (default); anthropic: Anthropic\'s memory tool under /memories' -r
complete -c git -n '__fish_seen_subcommand_from call' -l propose -d 'propose every write of the call instead of applying it (as "propose": true does)'
complete -c git -n '__fish_seen_subcommand_from call' -l adopt-outside-changes -d 'before a write, commit files changed beside the tools as their own commit (\'outside change\', your git identity) instead of refusing the write'
complete -c git -n '__fish_seen_subcommand_from view' -s h -l help -d 'show this help message and exit'
complete -c git -n '__fish_seen_subcommand_from view' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git -n '__fish_seen_subcommand_from view' -l json -d 'print one JSON object on stdout, errors included'
complete -c git -n '__fish_seen_subcommand_from view' -s q -l quiet -d 'print nothing on success'
complete -c git -n '__fish_seen_subcommand_from view' -l range -d 'body lines A to B (B = -1: to the end)' -r
complete -c git -n '__fish_seen_subcommand_from view' -s n -l line-numbers -d 'number the body lines'
complete -c git -n '__fish_seen_subcommand_from init' -s h -l help -d 'show this help message and exit'
complete -c git -n '__fish_seen_subcommand_from init' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git -n '__fish_seen_subcommand_from init' -l json -d 'print one JSON object on stdout, errors included'
complete -c git -n '__fish_seen_subcommand_from init' -s q -l quiet -d 'print nothing on success'
complete -c git -n '__fish_seen_subcommand_from init' -l agent-id -d 'record memory.agentId (the commit author)' -r
complete -c git -n '__fish_seen_subcommand_from init' -l agent-name -d 'record memory.agentName' -r
complete -c git -n '__fish_seen_subcommand_from init' -l remote -d 'add URL as remote origin' -r
complete -c git -n '__fish_seen_subcommand_from init' -l layout -d 'repository layout: letta (system/ folder, the default), letta-root (a root MEMORY.md index, current Letta) or plain (files as named, no required frontmatter; recorded as memory.layout)' -r
complete -c git -n '__fish_seen_subcommand_from init' -l personality -d 'seed the persona and human files from a personality (git memory personality list)' -r
complete -c git -n '__fish_seen_subcommand_from check' -s h -l help -d 'show this help message and exit'
complete -c git -n '__fish_seen_subcommand_from check' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git -n '__fish_seen_subcommand_from check' -l json -d 'print one JSON object on stdout, errors included'
complete -c git -n '__fish_seen_subcommand_from check' -s q -l quiet -d 'print nothing on success'
complete -c git -n '__fish_seen_subcommand_from check' -l staged -d 'check the staged changes against HEAD'
complete -c git -n '__fish_seen_subcommand_from check' -l all -d 'check every file at HEAD (the default)'
complete -c git -n '__fish_seen_subcommand_from check' -l tree -d 'check one committed tree alone, every problem of every file (default HEAD)' -r
complete -c git -n '__fish_seen_subcommand_from check' -l format -d 'github: one ::error annotation per problem, for GitHub Actions' -r
complete -c git -n '__fish_seen_subcommand_from hooks' -s h -l help -d 'show this help message and exit'
complete -c git -n '__fish_seen_subcommand_from hooks' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git -n '__fish_seen_subcommand_from hooks' -l json -d 'print one JSON object on stdout, errors included'
complete -c git -n '__fish_seen_subcommand_from hooks' -s q -l quiet -d 'print nothing on success'
complete -c git -n '__fish_seen_subcommand_from mirror' -s h -l help -d 'show this help message and exit'
complete -c git -n '__fish_seen_subcommand_from mirror' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git -n '__fish_seen_subcommand_from mirror' -l json -d 'print one JSON object on stdout, errors included'
complete -c git -n '__fish_seen_subcommand_from mirror' -s q -l quiet -d 'print nothing on success'
complete -c git -n '__fish_seen_subcommand_from clone' -s h -l help -d 'show this help message and exit'
complete -c git -n '__fish_seen_subcommand_from clone' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git -n '__fish_seen_subcommand_from clone' -l json -d 'print one JSON object on stdout, errors included'
complete -c git -n '__fish_seen_subcommand_from clone' -s q -l quiet -d 'print nothing on success'
complete -c git -n '__fish_seen_subcommand_from clone' -l letta-agent -d 'clone this Letta agent\'s memory repository' -r
complete -c git -n '__fish_seen_subcommand_from clone' -l auth-scheme -d 'how to send the token (stored as memory.authScheme; default: basic)' -r
complete -c git -n '__fish_seen_subcommand_from clone' -l layout -d 'the memory\'s layout, recorded as memory.layout (a clone cannot read the remote\'s config; a plain memory needs this)' -r
complete -c git -n '__fish_seen_subcommand_from clone' -l branch -d 'the branch to check out (default: the server\'s HEAD, else main, else the only one)' -r
complete -c git -n '__fish_seen_subcommand_from sync' -s h -l help -d 'show this help message and exit'
complete -c git -n '__fish_seen_subcommand_from sync' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git -n '__fish_seen_subcommand_from sync' -l json -d 'print one JSON object on stdout, errors included'
complete -c git -n '__fish_seen_subcommand_from sync' -s q -l quiet -d 'print nothing on success'
complete -c git -n '__fish_seen_subcommand_from sync' -l deadline -d 'how long to keep retrying a push others\' pushes refused (default: memory.syncDeadline, else 60)' -r
complete -c git -n '__fish_seen_subcommand_from status' -s h -l help -d 'show this help message and exit'
complete -c git -n '__fish_seen_subcommand_from status' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git -n '__fish_seen_subcommand_from status' -l json -d 'print one JSON object on stdout, errors included'
complete -c git -n '__fish_seen_subcommand_from status' -s q -l quiet -d 'print nothing on success'
complete -c git -n '__fish_seen_subcommand_from compile' -s h -l help -d 'show this help message and exit'
complete -c git -n '__fish_seen_subcommand_from compile' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git -n '__fish_seen_subcommand_from compile' -l json -d 'print one JSON object on stdout, errors included'
complete -c git -n '__fish_seen_subcommand_from compile' -s q -l quiet -d 'print nothing on success'
complete -c git -n '__fish_seen_subcommand_from compile' -l rev -d 'the commit to read (default HEAD)' -r
complete -c git -n '__fish_seen_subcommand_from compile' -l compat -d 'letta: byte-exact Letta Code 0.30.25 output, its bugs included (non-ASCII names dropped, continuation lines not indented, no descriptions in the index)' -r
complete -c git -n '__fish_seen_subcommand_from compile' -l absolute -d 'write the repository\'s absolute path instead of $MEMORY_DIR'
complete -c git -n '__fish_seen_subcommand_from tree' -s h -l help -d 'show this help message and exit'
complete -c git -n '__fish_seen_subcommand_from tree' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git -n '__fish_seen_subcommand_from tree' -l json -d 'print one JSON object on stdout, errors included'
complete -c git -n '__fish_seen_subcommand_from tree' -s q -l quiet -d 'print nothing on success'
complete -c git -n '__fish_seen_subcommand_from tree' -l rev -d 'the commit to read (default HEAD)' -r
complete -c git -n '__fish_seen_subcommand_from tree' -l max-lines -d 'line budget (at least 2)' -r
complete -c git -n '__fish_seen_subcommand_from tree' -l max-chars -d 'character budget (at least 128)' -r
complete -c git -n '__fish_seen_subcommand_from tree' -l max-children -d 'entries shown per folder (at least 1)' -r
complete -c git -n '__fish_seen_subcommand_from tree' -l compat -d 'letta: only .md files, as Letta Code\'s renderer shows memory blocks' -r
complete -c git -n '__fish_seen_subcommand_from tokens' -s h -l help -d 'show this help message and exit'
complete -c git -n '__fish_seen_subcommand_from tokens' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git -n '__fish_seen_subcommand_from tokens' -l json -d 'print one JSON object on stdout, errors included'
complete -c git -n '__fish_seen_subcommand_from tokens' -s q -l quiet -d 'print nothing on success'
complete -c git -n '__fish_seen_subcommand_from tokens' -l rev -d 'the commit to read (default HEAD)' -r
complete -c git -n '__fish_seen_subcommand_from tokens' -l top -d 'files to list (default 20; 0: none)' -r
complete -c git -n '__fish_seen_subcommand_from tokens' -l budget -d 'fail (exit 1) when the total exceeds N tokens' -r
complete -c git -n '__fish_seen_subcommand_from config' -s h -l help -d 'show this help message and exit'
complete -c git -n '__fish_seen_subcommand_from config' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git -n '__fish_seen_subcommand_from config' -l json -d 'print one JSON object on stdout, errors included'
complete -c git -n '__fish_seen_subcommand_from config' -s q -l quiet -d 'print nothing on success'
complete -c git -n '__fish_seen_subcommand_from protect' -s h -l help -d 'show this help message and exit'
complete -c git -n '__fish_seen_subcommand_from protect' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git -n '__fish_seen_subcommand_from protect' -l json -d 'print one JSON object on stdout, errors included'
complete -c git -n '__fish_seen_subcommand_from protect' -s q -l quiet -d 'print nothing on success'
complete -c git -n '__fish_seen_subcommand_from protect' -s m -l reason -d 'why (the commit message)' -r
complete -c git -n '__fish_seen_subcommand_from protect' -s S -l sign -d 'sign the commit with your key (git\'s user.signingKey, gpg.format)'
complete -c git -n '__fish_seen_subcommand_from unprotect' -s h -l help -d 'show this help message and exit'
complete -c git -n '__fish_seen_subcommand_from unprotect' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git -n '__fish_seen_subcommand_from unprotect' -l json -d 'print one JSON object on stdout, errors included'
complete -c git -n '__fish_seen_subcommand_from unprotect' -s q -l quiet -d 'print nothing on success'
complete -c git -n '__fish_seen_subcommand_from unprotect' -s m -l reason -d 'why (the commit message)' -r
complete -c git -n '__fish_seen_subcommand_from unprotect' -s S -l sign -d 'sign the commit with your key (git\'s user.signingKey, gpg.format)'
complete -c git -n '__fish_seen_subcommand_from personality' -s h -l help -d 'show this help message and exit'
complete -c git -n '__fish_seen_subcommand_from personality' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git -n '__fish_seen_subcommand_from personality' -l json -d 'print one JSON object on stdout, errors included'
complete -c git -n '__fish_seen_subcommand_from personality' -s q -l quiet -d 'print nothing on success'
complete -c git -n '__fish_seen_subcommand_from redact' -s h -l help -d 'show this help message and exit'
complete -c git -n '__fish_seen_subcommand_from redact' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git -n '__fish_seen_subcommand_from redact' -l json -d 'print one JSON object on stdout, errors included'
complete -c git -n '__fish_seen_subcommand_from redact' -s q -l quiet -d 'print nothing on success'
complete -c git -n '__fish_seen_subcommand_from redact' -l text-file -d 'the strings, one per line (\'-\': standard input)' -r
complete -c git -n '__fish_seen_subcommand_from redact' -l path -d 'a file or folder to remove from every version (repeatable)' -r
complete -c git -n '__fish_seen_subcommand_from redact' -l dry-run -d 'list the commits, files and refs that would change and count the occurrences'
complete -c git -n '__fish_seen_subcommand_from redact' -l push -d 'then send the new history to the upstream remote and the mirror (--force-with-lease on what each has, catching up with commits pushed meanwhile: the one force push this toolkit makes)'
complete -c git -n '__fish_seen_subcommand_from redact' -s m -l reason -d 'the record commit\'s subject' -r
complete -c git -n '__fish_seen_subcommand_from doctor' -s h -l help -d 'show this help message and exit'
complete -c git -n '__fish_seen_subcommand_from doctor' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git -n '__fish_seen_subcommand_from doctor' -l json -d 'print one JSON object on stdout, errors included'
complete -c git -n '__fish_seen_subcommand_from doctor' -s q -l quiet -d 'print nothing on success'
complete -c git -n '__fish_seen_subcommand_from doctor' -l rev -d 'the commit to audit (default HEAD)' -r
complete -c git -n '__fish_seen_subcommand_from proposals' -s h -l help -d 'show this help message and exit'
complete -c git -n '__fish_seen_subcommand_from proposals' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git -n '__fish_seen_subcommand_from proposals' -l json -d 'print one JSON object on stdout, errors included'
complete -c git -n '__fish_seen_subcommand_from proposals' -s q -l quiet -d 'print nothing on success'
complete -c git -n '__fish_seen_subcommand_from mcp' -s h -l help -d 'show this help message and exit'
complete -c git -n '__fish_seen_subcommand_from mcp' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git -n '__fish_seen_subcommand_from mcp' -l json -d 'print one JSON object on stdout, errors included'
complete -c git -n '__fish_seen_subcommand_from mcp' -s q -l quiet -d 'print nothing on success'
complete -c git -n '__fish_seen_subcommand_from mcp' -l http -d 'serve streamable HTTP instead of stdio'
complete -c git -n '__fish_seen_subcommand_from mcp' -l host -d 'address to listen on (default 127.0.0.1; any other needs $GIT_MEMORY_MCP_TOKEN)' -r
complete -c git -n '__fish_seen_subcommand_from mcp' -l port -d 'port (default 8765; 0: any free port)' -r
complete -c git -n '__fish_seen_subcommand_from mcp' -l root -d 'serve every agent\'s memory under DIR (DIR/<agent>[/memory]); calls name the agent' -r
complete -c git -n '__fish_seen_subcommand_from mcp' -l adopt-outside-changes -d 'before a write, commit files changed beside the server as their own \'outside change\' commit (validated like any) instead of refusing the write (off by default)'
complete -c git -n '__fish_seen_subcommand_from mcp' -l tokens -d 'with --http --root: lines \'AGENT TOKEN\' (chmod 600); a client sees and touches only the agents its bearer token is listed for (\'*\': every agent)' -r
complete -c git -n '__fish_seen_subcommand_from review' -s h -l help -d 'show this help message and exit'
complete -c git -n '__fish_seen_subcommand_from review' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git -n '__fish_seen_subcommand_from review' -l json -d 'print one JSON object on stdout, errors included'
complete -c git -n '__fish_seen_subcommand_from review' -s q -l quiet -d 'print nothing on success'
complete -c git -n '__fish_seen_subcommand_from review' -l port -d 'port (default 0: any free port; the URL says which)' -r
complete -c git -n '__fish_seen_subcommand_from review' -l host -d 'address to listen on (default 127.0.0.1; any other needs $GIT_MEMORY_REVIEW_TOKEN)' -r
complete -c git -n '__fish_seen_subcommand_from review' -l root -d 'serve every agent\'s memory under DIR (DIR/<agent>[/memory])' -r
complete -c git -n '__fish_seen_subcommand_from review' -l no-browser -d 'print the URL; do not open a browser'
complete -c git -n '__fish_seen_subcommand_from serve' -s h -l help -d 'show this help message and exit'
complete -c git -n '__fish_seen_subcommand_from serve' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git -n '__fish_seen_subcommand_from serve' -l json -d 'print one JSON object on stdout, errors included'
complete -c git -n '__fish_seen_subcommand_from serve' -s q -l quiet -d 'print nothing on success'
complete -c git -n '__fish_seen_subcommand_from serve' -l root -d 'the folder of memories (DIR/<name>.git)' -r
complete -c git -n '__fish_seen_subcommand_from serve' -l host -d 'address to listen on (default 127.0.0.1)' -r
complete -c git -n '__fish_seen_subcommand_from serve' -l port -d 'port (default 0: any free port; the URL says which)' -r
complete -c git -n '__fish_seen_subcommand_from serve' -l layout -d 'the layout of memories made on first use (default letta)' -r
complete -c git -n '__fish_seen_subcommand_from install' -s h -l help -d 'show this help message and exit'
complete -c git -n '__fish_seen_subcommand_from install' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git -n '__fish_seen_subcommand_from install' -l json -d 'print one JSON object on stdout, errors included'
complete -c git -n '__fish_seen_subcommand_from install' -s q -l quiet -d 'print nothing on success'
complete -c git -n '__fish_seen_subcommand_from install' -l user -d 'the user\'s settings (default)'
complete -c git -n '__fish_seen_subcommand_from install' -l project -d 'claude-code: this project\'s .claude/settings.local.json and .mcp.json'
complete -c git -n '__fish_seen_subcommand_from install' -l name -d 'the MCP server\'s name (default memory)' -r
complete -c git -n '__fish_seen_subcommand_from install' -l dry-run -d 'print what would change; change nothing'
complete -c git -n '__fish_seen_subcommand_from uninstall' -s h -l help -d 'show this help message and exit'
complete -c git -n '__fish_seen_subcommand_from uninstall' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git -n '__fish_seen_subcommand_from uninstall' -l json -d 'print one JSON object on stdout, errors included'
complete -c git -n '__fish_seen_subcommand_from uninstall' -s q -l quiet -d 'print nothing on success'
complete -c git -n '__fish_seen_subcommand_from uninstall' -l user -d 'the user\'s settings (default)'
complete -c git -n '__fish_seen_subcommand_from uninstall' -l project -d 'claude-code: this project\'s .claude/settings.local.json and .mcp.json'
complete -c git -n '__fish_seen_subcommand_from uninstall' -l name -d 'the MCP server\'s name (default memory)' -r
complete -c git -n '__fish_seen_subcommand_from uninstall' -l dry-run -d 'print what would change; change nothing'
complete -c git -n '__fish_seen_subcommand_from hook' -s h -l help -d 'show this help message and exit'
complete -c git -n '__fish_seen_subcommand_from hook' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git -n '__fish_seen_subcommand_from hook' -l json -d 'print one JSON object on stdout, errors included'
complete -c git -n '__fish_seen_subcommand_from hook' -s q -l quiet -d 'print nothing on success'
complete -c git -n '__fish_seen_subcommand_from search' -s h -l help -d 'show this help message and exit'
complete -c git -n '__fish_seen_subcommand_from search' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git -n '__fish_seen_subcommand_from search' -l json -d 'print one JSON object on stdout, errors included'
complete -c git -n '__fish_seen_subcommand_from search' -s q -l quiet -d 'print nothing on success'
complete -c git -n '__fish_seen_subcommand_from search' -l regex -d 'QUERY is a Perl-style regular expression (time-bounded: memory.regexTimeout)'
complete -c git -n '__fish_seen_subcommand_from search' -l in -d 'where to look (default: all)' -r
complete -c git -n '__fish_seen_subcommand_from search' -l rev -d 'search the memory as it was at REV' -r
complete -c git -n '__fish_seen_subcommand_from search' -l history -d 'search every past version too: finds deleted and overwritten facts'
complete -c git -n '__fish_seen_subcommand_from search' -l limit -d 'files shown (default 20)' -r
complete -c git -n '__fish_seen_subcommand_from search' -l lines -d 'matching lines shown per file, best first, each with a line of context (default 3)' -r
complete -c git -n '__fish_seen_subcommand_from search' -l budget -d 'the best passages that fit in about this many tokens (default: 4000)' -r
complete -c git -n '__fish_seen_subcommand_from search' -l pinned -d 'pinned files (system/, already in the prompt): ranked on merit (default), listed first, or left out' -r
complete -c git -n '__fish_seen_subcommand_from log' -s h -l help -d 'show this help message and exit'
complete -c git -n '__fish_seen_subcommand_from log' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git -n '__fish_seen_subcommand_from log' -l json -d 'print one JSON object on stdout, errors included'
complete -c git -n '__fish_seen_subcommand_from log' -s q -l quiet -d 'print nothing on success'
complete -c git -n '__fish_seen_subcommand_from log' -s n -l max-count -d 'at most N commits' -r
complete -c git -n '__fish_seen_subcommand_from log' -l since -d 'commits newer than DATE (\'2 weeks ago\', 2026-01-31)' -r
complete -c git -n '__fish_seen_subcommand_from log' -l op -d 'only this operation (str_replace, delete, undo, ...)' -r
complete -c git -n '__fish_seen_subcommand_from log' -l dreams -d 'only dream merges, with their ids and the commits they merged'
complete -c git -n '__fish_seen_subcommand_from show' -s h -l help -d 'show this help message and exit'
complete -c git -n '__fish_seen_subcommand_from show' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git -n '__fish_seen_subcommand_from show' -l json -d 'print one JSON object on stdout, errors included'
complete -c git -n '__fish_seen_subcommand_from show' -s q -l quiet -d 'print nothing on success'
complete -c git -n '__fish_seen_subcommand_from show' -l rev -r
complete -c git -n '__fish_seen_subcommand_from diff' -s h -l help -d 'show this help message and exit'
complete -c git -n '__fish_seen_subcommand_from diff' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git -n '__fish_seen_subcommand_from diff' -l json -d 'print one JSON object on stdout, errors included'
complete -c git -n '__fish_seen_subcommand_from diff' -s q -l quiet -d 'print nothing on success'
complete -c git -n '__fish_seen_subcommand_from undo' -s h -l help -d 'show this help message and exit'
complete -c git -n '__fish_seen_subcommand_from undo' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git -n '__fish_seen_subcommand_from undo' -l json -d 'print one JSON object on stdout, errors included'
complete -c git -n '__fish_seen_subcommand_from undo' -s q -l quiet -d 'print nothing on success'
complete -c git -n '__fish_seen_subcommand_from undo' -l last -d 'the newest commit (HEAD)'
complete -c git -n '__fish_seen_subcommand_from undo' -l dream -d 'the merge of dream ID (git memory log --dreams)' -r
complete -c git -n '__fish_seen_subcommand_from undo' -s m -l reason -d 'why this change is made; becomes the commit subject (required)' -r
complete -c git -n '__fish_seen_subcommand_from undo' -l dry-run -d 'show the diff it would commit; change nothing'
complete -c git -n '__fish_seen_subcommand_from restore' -s h -l help -d 'show this help message and exit'
complete -c git -n '__fish_seen_subcommand_from restore' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git -n '__fish_seen_subcommand_from restore' -l json -d 'print one JSON object on stdout, errors included'
complete -c git -n '__fish_seen_subcommand_from restore' -s q -l quiet -d 'print nothing on success'
complete -c git -n '__fish_seen_subcommand_from restore' -l rev -r
complete -c git -n '__fish_seen_subcommand_from restore' -s m -l reason -d 'why this change is made; becomes the commit subject (required)' -r
complete -c git -n '__fish_seen_subcommand_from restore' -l dry-run -d 'show the diff it would commit; change nothing'
complete -c git -n '__fish_seen_subcommand_from help' -s h -l help -d 'show this help message and exit'
complete -c git -n '__fish_seen_subcommand_from help' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git -n '__fish_seen_subcommand_from help' -l json -d 'print one JSON object on stdout, errors included'
complete -c git -n '__fish_seen_subcommand_from help' -s q -l quiet -d 'print nothing on success'
complete -c git -n '__fish_seen_subcommand_from help' -l example -d 'print the path of an example file shipped with git-memfs (the docs\' session.jsonl, the dream agent recipes); without NAME, list them' -r
