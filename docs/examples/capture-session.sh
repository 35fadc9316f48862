#!/bin/sh
# A real terminal session with `stet run`, recorded into docs/examples/capture-session.txt by
#   sh docs/examples/capture-session.sh > docs/examples/capture-session.txt 2>&1
# Needs `stet` on PATH (or STET="python -m stet") and git. Works in a temporary folder, removed at
# the end. The agent runs the tests with Python as you would: it writes bytecode (__pycache__/),
# which capture leaves alone (build output; docs/cli.md).
# tests/e2e/test_examples.py runs this script and compares its output with the transcript.
set -e
STET=${STET:-stet}
dir=$(mktemp -d)
trap 'cd / && rm -rf "$dir"' EXIT
cd "$dir"
run() { printf '\n$ %s\n' "$*"; sh -c "$*" 2>&1 || true; }
git init -q app && cd app
git config user.email dev@example.com && git config user.name dev
cat > app.py <<'PY'
def greet(name):
    return "hello " + name


def main():
    print(greet("world"))
PY
printf 'import app\nassert app.greet("x").startswith("hello")\nprint("tests: ok")\n' > test_app.py
printf 'temporary notes\n' > notes.txt
git add -A && git commit -qm base
# The "agent": writes files directly, like Claude Code, Codex CLI or Aider, then runs the tests.
cat > ../agent.py <<'PY'
import os, subprocess, sys
text = open("app.py").read()
text = text.replace('"hello " + name', 'f"hello, {name}!"').replace('greet("world")', 'greet("stet")')
open("app.py", "w").write(text)
open("cli.py", "w").write("import app\n\nif __name__ == '__main__':\n    app.main()\n")
if os.path.exists("notes.txt"):
    os.remove("notes.txt")
print("agent: edited app.py, created cli.py, deleted notes.txt")
sys.exit(subprocess.run([sys.executable, "test_app.py"]).returncode)
PY
export NO_COLOR=1
run "$STET run --task greet -- python ../agent.py"
run "git status --short"
run "$STET status"
ids=$($STET status --json | python -c 'import json,sys; print(" ".join(h["id"] for h in json.load(sys.stdin)["hunks"]))')
set -- $ids
run "$STET accept $1 $3"
run "$STET reject $2 --feedback 'keep printing world: the smoke test greps for it'"
run "$STET run --task greet -- python ../agent.py"
run "$STET resume greet | sed -n '/## In short/,/## Files read/p'"
