#!/bin/sh
# OpenAI Codex CLI as the `git dream` agent.
#
#   git config dream.agent "sh $(git memory help --example agents/codex.sh)"
#   git config --add dream.sandbox.allowWrite ~/.codex        # its config, auth and logs
#
# What it reads besides its checkout (git dream grants these when it runs this file):
# dream.sandbox.allowRead: ${CODEX_HOME:-~/.codex}
# dream.sandbox.programs: codex
#
# `codex exec -` reads the prompt from stdin. Codex's workspace sandbox would not let
# it write the git metadata of the dream's checkout (it lives outside the checkout),
# so its own sandbox is opened up and git dream's Landlock sandbox confines it
# instead: it can still only write its checkout, its dream/<id> branch and $TMPDIR.
set -eu
exec codex exec --sandbox danger-full-access --skip-git-repo-check --ephemeral -
