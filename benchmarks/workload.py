"""Deterministic synthetic workloads: source files that look like code, and agent edits.

Real code repeats itself (blank lines, `return`, closing brackets, the same calls), which
is what makes line diffs hard; the generator reproduces that mix. Everything is ASCII so
UTF-16 columns are plain string indexes.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

_NAMES = [
    "value",
    "result",
    "items",
    "config",
    "path",
    "node",
    "count",
    "index",
    "buffer",
    "request",
    "response",
    "user",
    "record",
    "entry",
    "token",
    "offset",
    "limit",
    "cache",
    "state",
    "event",
]
_CALLS = ["len", "str", "int", "sorted", "list", "dict", "max", "min", "sum", "any"]


def code_lines(n: int, rng: random.Random, tag: str = "") -> list[str]:
    """`n` lines of plausible Python, each ending with a newline."""
    out: list[str] = []
    fn = 0
    while len(out) < n:
        fn += 1
        name = f"{rng.choice(_NAMES)}_{tag}{fn}"
        out.append(f"def {name}({rng.choice(_NAMES)}, {rng.choice(_NAMES)}=None):\n")
        out.append(f'    """Handle the {rng.choice(_NAMES)} of {name}."""\n')
        for _ in range(rng.randint(3, 12)):
            kind = rng.random()
            a, b = rng.choice(_NAMES), rng.choice(_NAMES)
            if kind < 0.45:
                out.append(f"    {a} = {rng.choice(_CALLS)}({b}) + {rng.randint(0, 999)}\n")
            elif kind < 0.6:
                out.append(f"    if {a} is None:\n")
                out.append("        return None\n")
            elif kind < 0.75:
                out.append(f"    for {a} in {b}:\n")
                out.append(f"        {b}.append({a})\n")
            elif kind < 0.85:
                out.append("\n")
            else:
                out.append(f"    {a}.{rng.choice(_NAMES)} = {b}\n")
        out.append(f"    return {rng.choice(_NAMES)}\n")
        out.append("\n")
        out.append("\n")
    return out[:n]


def scatter_changes(lines: list[str], changes: int, rng: random.Random, tag: str = "agent") -> list[str]:
    """The lines after `changes` agent edits at scattered places: each replaces, inserts or
    deletes 1-3 lines, and no two edits touch or neighbour each other (so each is one hunk)."""
    n = len(lines)
    slot = n // changes
    assert slot >= 8, "too many changes for the file"
    out: list[str] = []
    pos = 0
    for k in range(changes):
        lo = k * slot + 2
        start = rng.randint(lo, lo + slot - 7)
        out.extend(lines[pos:start])
        kind = rng.random()
        width = rng.randint(1, 3)
        new = [
            f"    {tag}_{k}_{j} = {rng.choice(_CALLS)}({rng.choice(_NAMES)})  # changed\n"
            for j in range(rng.randint(1, 3))
        ]
        if kind < 0.6:  # replace
            out.extend(new)
            pos = start + width
        elif kind < 0.85:  # insert
            out.extend(new)
            pos = start
        else:  # delete
            pos = start + width
    out.extend(lines[pos:])
    return out


def write_file(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as f:
        f.write(text)


def file_uri(path: os.PathLike | str) -> str:
    return Path(os.path.realpath(path)).as_uri()
