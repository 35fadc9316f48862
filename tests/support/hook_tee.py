"""A recorder around a hook command, to see how each of Stet's hooks answered a real agent:
`python hook_tee.py LOG COMMAND` runs COMMAND with the shell (as the agents do), the agent's input
on its stdin, passes its stdout, stderr and exit code through unchanged, and appends one JSON line
to LOG: the input, the exit code, what it printed on stdout and on stderr."""

from __future__ import annotations

import json
import subprocess
import sys


def main(log: str, command: str) -> int:
    raw = sys.stdin.read()
    p = subprocess.run(["/bin/sh", "-c", command], input=raw, capture_output=True, text=True)
    try:
        given = json.loads(raw)
    except ValueError:
        given = {"unparsable": raw}
    with open(log, "a", encoding="utf-8") as f:
        f.write(json.dumps({"input": given, "code": p.returncode, "stdout": p.stdout, "stderr": p.stderr}) + "\n")
    sys.stdout.write(p.stdout)
    sys.stderr.write(p.stderr)
    return p.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
