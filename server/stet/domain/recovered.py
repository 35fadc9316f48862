"""What bringing the review up to date after a start found: the files with open hunks, every
hunk of the store by status, and how long it took. The editor is told it (`stet/restored`,
present/restored.py); `stet doctor` says how long it took."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Recovered:
    files: int
    counts: dict[str, int]
    duration_ms: float
