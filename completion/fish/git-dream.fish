# Generated from the git-dream parser by tools/make_completion.py; do not edit.
complete -c git-dream -f -n '__fish_use_subcommand' -a list -d 'runs that hold work (kept or pending)'
complete -c git-dream -f -n '__fish_use_subcommand' -a show -d 'one run: outcome, commits, diffstat, log'
complete -c git-dream -f -n '__fish_use_subcommand' -a finish -d 'verify a pending run was merged (or --merge it)'
complete -c git-dream -f -n '__fish_use_subcommand' -a drop -d 'discard a kept or pending run'
complete -c git-dream -n '__fish_use_subcommand' -s h -l help -d 'show this help message and exit'
complete -c git-dream -n '__fish_use_subcommand' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git-dream -n '__fish_use_subcommand' -l json -d 'print one JSON object on stdout, errors included'
complete -c git-dream -n '__fish_use_subcommand' -s q -l quiet -d 'print nothing on success'
complete -c git-dream -n '__fish_use_subcommand' -l version -d 'show program\'s version number and exit'
complete -c git-dream -n '__fish_use_subcommand' -l agent -d 'agent command, or builtin:tidy / builtin:notes' -r
complete -c git-dream -n '__fish_use_subcommand' -l from -d 'reflect on new content of transcript:FILE.jsonl, openhands:DIR|FILE, claude-code:DIR|FILE, codex:DIR|FILE, or auto (every new Claude Code and Codex session of this project)' -r
complete -c git-dream -n '__fish_use_subcommand' -l reread -d 'with --from: read the source again from where the last dream that consumed it began (a dream that changed nothing still consumes what it read)'
complete -c git-dream -n '__fish_use_subcommand' -l to -d 'maintain this document (e.g. AGENTS.md) through system/<name> in memory' -r
complete -c git-dream -n '__fish_use_subcommand' -s i -l instruction -d 'an extra instruction for the agent' -r
complete -c git-dream -n '__fish_use_subcommand' -l timeout -d 'seconds before the agent is killed (default: dream.timeout, else 1500)' -r
complete -c git-dream -n '__fish_use_subcommand' -l merge -d 'auto: merge validated work; explicit: leave it pending for review' -r
complete -c git-dream -n '__fish_use_subcommand' -l no-sandbox -d 'run the agent unconfined (also GIT_DREAM_SANDBOX=0)'
complete -c git-dream -n '__fish_use_subcommand' -l auto -d 'run only if due (dream.trigger has commits, and dream.every memory commits)'
complete -c git-dream -n '__fish_use_subcommand' -l background -d 'detach and run in the background'
complete -c git-dream -n '__fish_use_subcommand' -l verbose -d 'also copy the agent\'s output to stderr'
complete -c git-dream -n '__fish_seen_subcommand_from list' -s h -l help -d 'show this help message and exit'
complete -c git-dream -n '__fish_seen_subcommand_from list' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git-dream -n '__fish_seen_subcommand_from list' -l json -d 'print one JSON object on stdout, errors included'
complete -c git-dream -n '__fish_seen_subcommand_from list' -s q -l quiet -d 'print nothing on success'
complete -c git-dream -n '__fish_seen_subcommand_from list' -l all -d 'every recorded run'
complete -c git-dream -n '__fish_seen_subcommand_from show' -s h -l help -d 'show this help message and exit'
complete -c git-dream -n '__fish_seen_subcommand_from show' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git-dream -n '__fish_seen_subcommand_from show' -l json -d 'print one JSON object on stdout, errors included'
complete -c git-dream -n '__fish_seen_subcommand_from show' -s q -l quiet -d 'print nothing on success'
complete -c git-dream -n '__fish_seen_subcommand_from finish' -s h -l help -d 'show this help message and exit'
complete -c git-dream -n '__fish_seen_subcommand_from finish' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git-dream -n '__fish_seen_subcommand_from finish' -l json -d 'print one JSON object on stdout, errors included'
complete -c git-dream -n '__fish_seen_subcommand_from finish' -s q -l quiet -d 'print nothing on success'
complete -c git-dream -n '__fish_seen_subcommand_from finish' -l merge -d 'validate and merge the run\'s work now'
complete -c git-dream -n '__fish_seen_subcommand_from drop' -s h -l help -d 'show this help message and exit'
complete -c git-dream -n '__fish_seen_subcommand_from drop' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git-dream -n '__fish_seen_subcommand_from drop' -l json -d 'print one JSON object on stdout, errors included'
complete -c git-dream -n '__fish_seen_subcommand_from drop' -s q -l quiet -d 'print nothing on success'
complete -c git-dream -n '__fish_seen_subcommand_from drop' -l note -d 'why it was dropped; kept in the run record' -r
complete -c git -f -n '__fish_seen_subcommand_from dream' -a list -d 'runs that hold work (kept or pending)'
complete -c git -f -n '__fish_seen_subcommand_from dream' -a show -d 'one run: outcome, commits, diffstat, log'
complete -c git -f -n '__fish_seen_subcommand_from dream' -a finish -d 'verify a pending run was merged (or --merge it)'
complete -c git -f -n '__fish_seen_subcommand_from dream' -a drop -d 'discard a kept or pending run'
complete -c git -n '__fish_seen_subcommand_from dream' -s h -l help -d 'show this help message and exit'
complete -c git -n '__fish_seen_subcommand_from dream' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git -n '__fish_seen_subcommand_from dream' -l json -d 'print one JSON object on stdout, errors included'
complete -c git -n '__fish_seen_subcommand_from dream' -s q -l quiet -d 'print nothing on success'
complete -c git -n '__fish_seen_subcommand_from dream' -l version -d 'show program\'s version number and exit'
complete -c git -n '__fish_seen_subcommand_from dream' -l agent -d 'agent command, or builtin:tidy / builtin:notes' -r
complete -c git -n '__fish_seen_subcommand_from dream' -l from -d 'reflect on new content of transcript:FILE.jsonl, openhands:DIR|FILE, claude-code:DIR|FILE, codex:DIR|FILE, or auto (every new Claude Code and Codex session of this project)' -r
complete -c git -n '__fish_seen_subcommand_from dream' -l reread -d 'with --from: read the source again from where the last dream that consumed it began (a dream that changed nothing still consumes what it read)'
complete -c git -n '__fish_seen_subcommand_from dream' -l to -d 'maintain this document (e.g. AGENTS.md) through system/<name> in memory' -r
complete -c git -n '__fish_seen_subcommand_from dream' -s i -l instruction -d 'an extra instruction for the agent' -r
complete -c git -n '__fish_seen_subcommand_from dream' -l timeout -d 'seconds before the agent is killed (default: dream.timeout, else 1500)' -r
complete -c git -n '__fish_seen_subcommand_from dream' -l merge -d 'auto: merge validated work; explicit: leave it pending for review' -r
complete -c git -n '__fish_seen_subcommand_from dream' -l no-sandbox -d 'run the agent unconfined (also GIT_DREAM_SANDBOX=0)'
complete -c git -n '__fish_seen_subcommand_from dream' -l auto -d 'run only if due (dream.trigger has commits, and dream.every memory commits)'
complete -c git -n '__fish_seen_subcommand_from dream' -l background -d 'detach and run in the background'
complete -c git -n '__fish_seen_subcommand_from dream' -l verbose -d 'also copy the agent\'s output to stderr'
complete -c git -n '__fish_seen_subcommand_from list' -s h -l help -d 'show this help message and exit'
complete -c git -n '__fish_seen_subcommand_from list' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git -n '__fish_seen_subcommand_from list' -l json -d 'print one JSON object on stdout, errors included'
complete -c git -n '__fish_seen_subcommand_from list' -s q -l quiet -d 'print nothing on success'
complete -c git -n '__fish_seen_subcommand_from list' -l all -d 'every recorded run'
complete -c git -n '__fish_seen_subcommand_from show' -s h -l help -d 'show this help message and exit'
complete -c git -n '__fish_seen_subcommand_from show' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git -n '__fish_seen_subcommand_from show' -l json -d 'print one JSON object on stdout, errors included'
complete -c git -n '__fish_seen_subcommand_from show' -s q -l quiet -d 'print nothing on success'
complete -c git -n '__fish_seen_subcommand_from finish' -s h -l help -d 'show this help message and exit'
complete -c git -n '__fish_seen_subcommand_from finish' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git -n '__fish_seen_subcommand_from finish' -l json -d 'print one JSON object on stdout, errors included'
complete -c git -n '__fish_seen_subcommand_from finish' -s q -l quiet -d 'print nothing on success'
complete -c git -n '__fish_seen_subcommand_from finish' -l merge -d 'validate and merge the run\'s work now'
complete -c git -n '__fish_seen_subcommand_from drop' -s h -l help -d 'show this help message and exit'
complete -c git -n '__fish_seen_subcommand_from drop' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git -n '__fish_seen_subcommand_from drop' -l json -d 'print one JSON object on stdout, errors included'
complete -c git -n '__fish_seen_subcommand_from drop' -s q -l quiet -d 'print nothing on success'
complete -c git -n '__fish_seen_subcommand_from drop' -l note -d 'why it was dropped; kept in the run record' -r
