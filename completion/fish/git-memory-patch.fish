# Generated from the git-memory-patch parser by tools/make_completion.py; do not edit.
complete -c git-memory-patch -n '__fish_use_subcommand' -s h -l help -d 'show this help message and exit'
complete -c git-memory-patch -n '__fish_use_subcommand' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git-memory-patch -n '__fish_use_subcommand' -l json -d 'print one JSON object on stdout, errors included'
complete -c git-memory-patch -n '__fish_use_subcommand' -s q -l quiet -d 'print nothing on success'
complete -c git-memory-patch -n '__fish_use_subcommand' -l version -d 'show program\'s version number and exit'
complete -c git-memory-patch -n '__fish_use_subcommand' -s m -l reason -d 'why this change is made; becomes the commit subject (required)' -r
complete -c git-memory-patch -n '__fish_use_subcommand' -l propose -d 'do not apply the patch: keep it as a proposal for a person to accept or reject (git memory proposals); for what only a person may change'
complete -c git -n '__fish_seen_subcommand_from memory-patch' -s h -l help -d 'show this help message and exit'
complete -c git -n '__fish_seen_subcommand_from memory-patch' -l memory-dir -d 'memory repository to use (default: $MEMORY_DIR, $AGENT_ID\'s ~/.letta/agents/<id>/memory, else the current work tree)' -r
complete -c git -n '__fish_seen_subcommand_from memory-patch' -l json -d 'print one JSON object on stdout, errors included'
complete -c git -n '__fish_seen_subcommand_from memory-patch' -s q -l quiet -d 'print nothing on success'
complete -c git -n '__fish_seen_subcommand_from memory-patch' -l version -d 'show program\'s version number and exit'
complete -c git -n '__fish_seen_subcommand_from memory-patch' -s m -l reason -d 'why this change is made; becomes the commit subject (required)' -r
complete -c git -n '__fish_seen_subcommand_from memory-patch' -l propose -d 'do not apply the patch: keep it as a proposal for a person to accept or reject (git memory proposals); for what only a person may change'
