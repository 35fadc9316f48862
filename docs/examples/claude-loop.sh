#!/bin/sh
# The agent's loop with Claude Code, recorded into docs/examples/claude-loop.txt by
#   sh docs/examples/claude-loop.sh > docs/examples/claude-loop.txt 2>&1
# Each hook is run as Claude Code runs it: `stet hook claude-code` with the event's JSON on stdin,
# the exact fields Claude Code sends. Needs `stet` on PATH and git. Works in a temporary folder,
# removed at the end. tests/e2e/test_examples.py runs this script and compares its output with
# the transcript.
set -e
dir=$(mktemp -d)
trap 'cd / && rm -rf "$dir"' EXIT
cd "$dir"
git init -q app && cd app
git config user.email dev@example.com && git config user.name dev
printf 'RATE_LIMIT = 10  # requests per second\n\n\ndef allowed(count):\n    return count <= RATE_LIMIT\n' > limits.py
git add -A && git commit -qm base
S1=8a3d5c1e-2f4b-4e6a-9c7d-1b2e3f4a5b6c
S2=0c9b8a7d-6e5f-4a3b-8c2d-1e0f9a8b7c6d
# event SESSION EVENT EXTRA-FIELDS: one hook input, as Claude Code writes it
event() {
    printf '{"session_id": "%s", "transcript_path": "%s/.claude-%s.jsonl", "cwd": "%s", "permission_mode": "default", "hook_event_name": "%s"%s}' \
        "$1" "$dir" "$1" "$PWD" "$2" "$3"
}
hook() { printf '\n[%s]\n' "$2"; event "$@" | stet hook claude-code; }
EDIT=', "tool_name": "Edit", "tool_input": {"file_path": "'$PWD'/limits.py", "old_string": "RATE_LIMIT = 10", "new_string": "RATE_LIMIT = 50", "replace_all": false}'
printf '$ stet integrate claude-code\n'
stet integrate claude-code
printf '\n# Session 1: Claude Code raises the limit (PreToolUse, the Edit itself, PostToolUse), the turn ends (Stop)\n'
hook $S1 SessionStart ', "source": "startup"'
hook $S1 UserPromptSubmit ', "prompt": "allow 50 requests per second"'
hook $S1 PreToolUse "$EDIT"', "tool_use_id": "toolu_01A"'
sed -i 's/RATE_LIMIT = 10/RATE_LIMIT = 50/' limits.py
hook $S1 PostToolUse "$EDIT"', "tool_use_id": "toolu_01A", "tool_response": {"filePath": "'$PWD'/limits.py"}'
hook $S1 Stop ', "stop_hook_active": false'
printf '\n$ stet status --turn last\n'
stet status --turn last
id=$(stet status --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["hunks"][0]["id"])')
printf '\n$ stet reject %s --feedback "the API gateway caps us at 10 requests per second"\n' "$id"
stet reject "$id" --feedback "the API gateway caps us at 10 requests per second"
printf '\n# The developer types the next prompt: the agent is told the decision, once\n'
hook $S1 UserPromptSubmit ', "prompt": "go on"'
hook $S1 UserPromptSubmit ', "prompt": "and the docs?"'
printf '(nothing: already told)\n'
printf '\n# The agent tries the same change again: denied, with the developer'"'"'s feedback as the reason\n'
hook $S1 PreToolUse "$EDIT"', "tool_use_id": "toolu_01B"'
printf '\n$ cat limits.py\n'
cat limits.py
printf '\n# A new session (and a resumed, cleared or compacted one) is told the open review\n'
hook $S2 SessionStart ', "source": "startup"'
printf '\n# Session 2 works on: it adds a check and a print; the developer takes the check, not the print\n'
hook $S2 UserPromptSubmit ', "prompt": "reject negative counts"'
EDIT2=', "tool_name": "Edit", "tool_input": {"file_path": "'$PWD'/limits.py", "old_string": "def allowed(count):\n", "new_string": "def allowed(count):\n    if count < 0:\n        raise ValueError(count)\n    print(\"checking\", count)\n", "replace_all": false}'
hook $S2 PreToolUse "$EDIT2"', "tool_use_id": "toolu_02A"'
python3 - <<'PY'
text = open("limits.py").read()
open("limits.py", "w").write(text.replace("def allowed(count):\n", "def allowed(count):\n    if count < 0:\n        raise ValueError(count)\n    print(\"checking\", count)\n"))
PY
hook $S2 PostToolUse "$EDIT2"', "tool_use_id": "toolu_02A", "tool_response": {"filePath": "'$PWD'/limits.py"}'
hook $S2 Stop ', "stop_hook_active": false'
id=$(stet status --turn last --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["hunks"][0]["id"])')
printf '\n$ stet show %s\n' "$id"
stet show "$id"
printf '\n$ stet accept %s --new 1-2\n' "$id"
stet accept "$id" --new 1-2
rest=$(stet status --json | python3 -c 'import json, sys; print([h["id"] for h in json.load(sys.stdin)["hunks"] if h["status"] == "pending"][0])')
printf '\n$ stet reject %s --feedback "no print in library code: use logging"\n' "$rest"
stet reject "$rest" --feedback "no print in library code: use logging"
printf '\n$ cat limits.py\n'
cat limits.py
hook $S2 UserPromptSubmit ', "prompt": "next"'
