"""A hook for recording what an agent sends its hooks: `python hook_dump.py FILE [ANSWER]` appends
the JSON the agent wrote on stdin to FILE (one line each, unparsable input kept as text) and prints
ANSWER (a hook's answer, to see what the agent does with it), or nothing: the agent goes on as
without hooks."""

from __future__ import annotations

import json
import sys


def main(path: str, answer: str = "") -> None:
    raw = sys.stdin.read()
    try:
        entry = json.loads(raw)
    except ValueError:
        entry = {"unparsable": raw}
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(entry) + "\n")
    if answer:
        print(answer)


if __name__ == "__main__":
    main(*sys.argv[1:3])
