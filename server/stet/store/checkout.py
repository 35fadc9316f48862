"""A checkout of the repository, as the PostgreSQL store sees it: which one this process is, and
the translation at the store's boundary between this checkout's `file:` uris (what memory,
the editor and the journal's effects on disk use) and repository-relative ones (what the
shared review stores): `file:///home/dev/proj/src/a.py` <-> `stet-repo:///src/a.py`.

Values are translated where they *are* a uri of this checkout (the prefix), and inside JSON
objects and lists (the op log's arguments and results, an effect's edits) where a JSON string
starts with one. A hunk's text that happens to contain this checkout's root uri inside a JSON
document is translated too, and back on the way out: the same checkout reads exactly what it
wrote; another checkout reads its own root there (README: "Teams and remote agents")."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

REPO = "stet-repo:///"


@dataclass(frozen=True)
class Checkout:
    id: str  # "host:root"
    root_uri: str  # this checkout's first root, as the workspace writes it (no trailing slash)
    _prefix: str = field(init=False)
    _quoted: str = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_prefix", self.root_uri.rstrip("/") + "/")
        object.__setattr__(self, "_quoted", '"' + self.root_uri.rstrip("/") + "/")

    def to_store(self, v: Any) -> Any:
        if type(v) is str:
            if v.startswith(self._prefix):
                return REPO + v[len(self._prefix) :]
            if v[:1] in "{[" and self._quoted in v:
                return v.replace(self._quoted, '"' + REPO)
        return v

    def from_store(self, v: Any) -> Any:
        if type(v) is str:
            if v.startswith(REPO):
                return self._prefix + v[len(REPO) :]
            if v[:1] in "{[" and '"' + REPO in v:
                return v.replace('"' + REPO, self._quoted)
        return v

    def params(self, args: Iterable[Any]) -> tuple[Any, ...]:
        return tuple(map(self.to_store, args))

    def row(self, row: tuple[Any, ...]) -> tuple[Any, ...]:
        return tuple(map(self.from_store, row))
