"""A scripted coding agent for the capture tests: it writes files directly, as Claude Code,
Codex CLI or Aider do, then runs the project's test, and exits with the test's code.

    python scripted_agent.py ROUND [--commit] [--also PATH=TEXT]...

Round 1 edits three places of a.py, creates new.py, deletes old.txt and renames r.txt to
s.txt with one line changed. Round 2 reads the developer's review of its task
(`stet resume $STET_TASK --json`), redoes what is not in the files yet - except the change
the developer rejected, as the feedback asks - and adds one change to b.txt. Whatever it
writes, it writes the final content (an agent redoing its job). `--commit` commits its work
like Aider does; `--also=PATH=TEXT` writes a file outside the agent's plan (the developer,
meanwhile); `--expect=PATH=TEXT` fails (exit 3) unless the file holds TEXT; `--linger=SECONDS`
waits before the test, as a real agent takes its time (an editor's server sees its files).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

A_BASE = 'LIMIT = 10\n\n\ndef greet(name):\n    return "hello " + name\n\n\ndef shout(name):\n    return greet(name).upper()\n\n\ndef main():\n    print(shout("world"))\n'
EDITS = {
    "limit": ("LIMIT = 10\n", "LIMIT = 20\n"),
    "greet": ('    return "hello " + name\n', '    return f"hello, {name}"\n'),
    "main": ('    print(shout("world"))\n', '    print(shout("stet"))\n'),
}
NEW_PY = "def added():\n    return 42\n"
R_BASE = "".join(f"r{i}\n" for i in range(1, 9))
S_TEXT = R_BASE.replace("r4\n", "R4\n")
CHECK = "import a\nassert a.greet('x').startswith('hello')\nassert a.LIMIT > 0\nprint('check: ok')\n"


def read(path: str) -> str | None:
    try:
        with open(path, newline="") as f:
            return f.read()
    except FileNotFoundError:
        return None


def write(path: str, text: str) -> None:
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w", newline="") as f:
        f.write(text)


def rejected_changes() -> set[str]:
    """Which of its edits the developer rejected, read from the task's context."""
    task = os.environ.get("STET_TASK")
    if not task:
        return set()
    p = subprocess.run(
        [sys.executable, "-m", "stet", "resume", task, "--json"], capture_output=True, text=True, cwd=os.getcwd()
    )
    if p.returncode != 0:
        return set()
    ctx = json.loads(p.stdout)
    out = set()
    for h in ctx["hunks"]["rejected"]:
        for name, (old, new) in EDITS.items():
            if h["oldText"] == old and h["newText"] == new:
                out.add(name)
    return out


def main(argv: list[str]) -> int:
    round_ = int(argv[0])
    skip = rejected_changes() if round_ > 1 else set()
    a = read("a.py") or A_BASE
    for name, (old, new) in EDITS.items():
        if name not in skip and old in a:
            a = a.replace(old, new)
    write("a.py", a)
    write("new.py", NEW_PY)
    if os.path.exists("old.txt"):
        os.unlink("old.txt")
    if os.path.exists("r.txt"):
        os.unlink("r.txt")
    write("s.txt", S_TEXT)
    if round_ > 1:
        write("b.txt", "alpha\nBETA\ngamma\n")
    for item in argv[1:]:
        if item.startswith("--expect="):  # a precondition of the test: the file holds this text
            path, _, text = item[len("--expect=") :].partition("=")
            if text not in (read(path) or ""):
                print(f"agent: {path} does not hold {text!r}")
                return 3
        if item.startswith("--also="):
            path, _, text = item[len("--also=") :].partition("=")
            write(path, text.replace("\\n", "\n"))
    for item in argv[1:]:
        if item.startswith("--linger="):  # keeps working a while: an editor's server sees its files
            time.sleep(float(item[len("--linger=") :]))
    if "--commit" in argv:
        subprocess.run(["git", "add", "-A"], check=True)
        subprocess.run(["git", "commit", "-q", "-m", f"agent round {round_}"], check=True)
    print(f"agent round {round_}: done" + (f", left alone as the developer asked: {sorted(skip)}" if skip else ""))
    # -B: the test's bytecode cache is not the agent's work (a real project ignores __pycache__/).
    return subprocess.run([sys.executable, "-B", "check.py"]).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
