#!/bin/sh
# Simon Willison's `llm` as the `git dream` agent. `llm` only answers text, so it is
# asked for memory tool calls, one JSON object per line, which `git memory call`
# turns into validated commits (a refused call is printed and skipped).
#
#   git config dream.agent "sh $(git memory help --example agents/llm.sh)"
#   git config dream.llmModel gpt-4o-mini          # optional: any model llm knows
#
# What it reads besides its checkout (git dream grants these when it runs this file):
# dream.sandbox.allowRead: ${LLM_USER_PATH:-${XDG_CONFIG_HOME:-~/.config}/io.datasette.llm}
# dream.sandbox.programs: llm
#
# --no-log keeps llm from writing its log database, which the sandbox would refuse.
set -eu
model=$(git config dream.llmModel || true)
system='You edit memory only by answering with tool calls: one JSON object per line and
nothing else. Each object is {"command": "create"|"str_replace"|"insert"|"delete"|"rename"|"update_description",
"reason": "<why>", ...} with the fields of that command: create: file_path, description, file_text;
str_replace: file_path, old_string, new_string; insert: file_path, insert_line, insert_text;
delete: file_path; rename: old_path, new_path; update_description: file_path, description.
Answer with no lines at all when nothing durable should change.'
calls="$TMPDIR/calls.jsonl"
llm --no-log ${model:+-m "$model"} -s "$system" < "$DREAM_PROMPT_FILE" > "$calls"
grep '^[[:space:]]*{' "$calls" > "$TMPDIR/only-calls" || true
while IFS= read -r call; do
    git memory call "$call" || true   # the refusal is in the log; go on with the rest
done < "$TMPDIR/only-calls"
