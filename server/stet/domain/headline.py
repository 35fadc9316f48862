"""The default message of captured hunks: who made the change and what they were asked, in a
short line (`claude: fix the login bug`), instead of a whole command line.

Pure: told from the words of a command line or from a prompt, never from files.
"""

from __future__ import annotations

import re

LIMIT = 160  # characters of the whole line, at most
# Programs that run the agent named by their first argument: `python agent.py` is `agent.py`.
_RUNNERS = re.compile(r"^(python|pypy|node|nodejs|deno|bun|ruby|perl|php|bash|sh|zsh|dash|ksh|fish)[0-9.]*$")
# Options of those runners that take a value (skipped with it).
_RUNNER_VALUES = {"-W", "-X", "-Q", "-I", "-r", "--require", "--import", "--loader"}


def one_line(text: str, limit: int) -> str:
    """`text` on one line (runs of whitespace made one space), cut to `limit` with "…"."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def line(who: str, asked: str | None) -> str:
    """`who: asked`, bounded; `who` alone when nothing is known of what was asked."""
    who = one_line(who, LIMIT // 3) or "agent"
    if not asked or not asked.strip():
        return who
    return f"{who}: {one_line(asked, LIMIT - len(who) - 2)}"


def _base(word: str) -> str:
    return word.rstrip("/").rsplit("/", 1)[-1]


def program(argv: list[str]) -> tuple[str, int]:
    """The agent's name from a command line, and where its own arguments start:
    `claude -p ...` is `claude`; `python ../agent.py ...` is `agent.py`; `python -m pkg` is `pkg`."""
    name = _base(argv[0]) if argv else ""
    if not _RUNNERS.match(name):
        return name, 1
    i = 1
    while i < len(argv):
        word = argv[i]
        if word == "-m" and i + 1 < len(argv):
            return argv[i + 1], i + 2
        if word in ("-c", "-e", "--eval"):
            return name, len(argv)  # inline code: nothing more to tell
        if word == "--":
            i += 1
            break
        if not word.startswith("-"):
            break
        i += 2 if word in _RUNNER_VALUES else 1
    if i < len(argv):
        return _base(argv[i]) or name, i + 1
    return name, i


def asked(args: list[str]) -> str | None:
    """What the agent was asked, among its arguments: the longest one that reads as a sentence
    (it has a space; an option's value counts: `--message=fix it`), None when there is none."""
    best: str | None = None
    for word in args:
        if word.startswith("-"):
            _, eq, value = word.partition("=")
            word = value if eq else ""
        if " " in word.strip() and (best is None or len(word) > len(best)):
            best = word
    return best
