"""Paths in the store are relative to the workspace's roots, on every engine: the translation at
the store's boundary between the `file:` uris the review, the editor and the files use and the
form the store keeps, so that a store moved with its folder, copied with it or mounted at another
path (and, in PostgreSQL, every checkout of the repository) reads the same review at its own place.

    file:///home/dev/app/src/a.py   <->  stet-repo:///src/a.py    (the first root)
    file:///home/dev/lib/b.py       <->  stet-root:1/b.py         (the root of index 1, 2...)

The rest of a path stays as the uri spells it (percent-encoded). What is translated is said
where it is written or read, never guessed from a value: a parameter is tagged (`AsUri` for a
uri, `AsDoc` for a JSON document holding uris: the op log's arguments and results, an effect's
edits, a capture's journal) and a column is read back by its name (`URI_COLUMNS`,
`DOC_COLUMNS`); a hunk's texts, a task's notes, ids and hashes pass untouched.

Inside a JSON document each string that starts with a root's uri is translated (a key, a value,
or the text of an edit that starts with one: read back at this root exactly as written, and at
another root with that root's uri). A string that starts with `stet-` in a document, or a uri
value that does, is stored behind `stet-esc:` so that no text is ever taken for a path: at the
same roots, what is read back is exactly what was written, whatever it holds.

A root this process was not opened with (a multi-root workspace's other folder, opened from the
command line in the first one) is read at the place the store last saw it (the `roots` table:
relocation.py), as absolute paths were before. A uri outside every root (an old store opened
from elsewhere) is kept as it is: readable, never changed, and counted (relocation.py) so that
it is made relative once a process opens the store from a root it fits."""

from __future__ import annotations

import re

TYPE_CHECKING = False  # types for mypy only: `stet status` reads roots without importing typing
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence
    from typing import Any

    Row = tuple[Any, ...]

FIRST = "stet-repo:///"  # the first root (PostgreSQL's name for it since the first shared store)
ESCAPE = "stet-esc:"
_MARK = "stet-"

URI_COLUMNS = frozenset({"uri", "new_uri"})
DOC_COLUMNS = frozenset({"args", "result", "edits", "restores", "cleanup", "outcome"})


def marker(n: int) -> str:
    """How the store writes the root of index `n`."""
    return FIRST if n == 0 else f"stet-root:{n}/"


def prefix_of(root_uri: str) -> str:
    """A root's uri as the beginning of the uris inside it (`file:///` for the root folder)."""
    return root_uri if root_uri.endswith("/") else root_uri + "/"


class AsUri:
    """A parameter that is a uri (or None): written relative to the roots."""

    __slots__ = ("value",)

    def __init__(self, value: str | None):
        self.value = value


class AsDoc:
    """A parameter that is a JSON document (or None) whose strings may be uris."""

    __slots__ = ("value",)

    def __init__(self, value: str | None):
        self.value = value


class Roots:
    """The roots of one process: `uris` its workspace's (first first), `known` the uris the store
    last saw for root indexes this process does not have (read, and written, at those places)."""

    def __init__(self, uris: Sequence[str] = (), known: Mapping[int, str] | None = None):
        self.uris: tuple[str, ...] = tuple(uris)
        self.known: dict[int, str] = {n: u for n, u in (known or {}).items() if n >= len(self.uris)}
        # (uri prefix, marker, quoted prefix, quoted marker): this process's roots in order
        # first (a path inside two nested roots is the first one's), then the ones it lacks.
        order = [*enumerate(self.uris), *sorted(self.known.items())]
        self._pairs = [(prefix_of(u), marker(n)) for n, u in order]
        # In a JSON document: a string that starts with a root's uri, or with `stet-` (escaped),
        # found as a quote that opens a string (not one escaped inside a string: after an odd
        # number of backslashes) and what follows it; the first root that fits names it.
        self._out = dict(self._pairs) | {_MARK: ESCAPE + _MARK}
        self._in = {m: p for p, m in self._pairs} | {ESCAPE + _MARK: _MARK}
        self._out_re = _opening([p for p, _ in self._pairs] + [_MARK])
        self._in_re = _opening([m for _, m in self._pairs] + [ESCAPE + _MARK])

    def with_roots(self, uris: Iterable[str]) -> Roots:
        """These roots and `uris` not among them yet, appended (indexes never change meaning
        within a process: a folder added to the editor's workspace gets the next one)."""
        mine = list(self.uris)
        mine += [u for u in dict.fromkeys(uris) if u not in mine]
        return Roots(mine, self.known)

    # --- one value ------------------------------------------------------------------------
    def to_store(self, v: str) -> str:
        for prefix, mark in self._pairs:
            if v.startswith(prefix):
                return mark + v[len(prefix) :]
        return ESCAPE + v if v.startswith(_MARK) else v

    def from_store(self, v: str) -> str:
        if not v.startswith(_MARK):
            return v
        if v.startswith(ESCAPE):
            return v[len(ESCAPE) :]
        for prefix, mark in self._pairs:
            if v.startswith(mark):
                return prefix + v[len(mark) :]
        return v  # a root no process told the store of: kept as stored

    def doc_to_store(self, text: str) -> str:
        if "file:" not in text and _MARK not in text:
            return text
        out = self._out
        return self._out_re.sub(lambda m: _swap(m, out), text)

    def doc_from_store(self, text: str) -> str:
        if '"' + _MARK not in text:
            return text
        back = self._in
        return self._in_re.sub(lambda m: _swap(m, back), text)

    # --- at the link -------------------------------------------------------------------------
    def params(self, args: Iterable[Any]) -> tuple[Any, ...]:
        """Parameters as the store writes them: tagged values translated, the rest as they are."""
        out = []
        for a in args:
            if type(a) is AsUri:
                a = None if a.value is None else self.to_store(a.value)
            elif type(a) is AsDoc:
                a = None if a.value is None else self.doc_to_store(a.value)
            out.append(a)
        return tuple(out)

    def reader(self, description: Sequence[Sequence[Any]] | None) -> Callable[[Row], Row] | None:
        """What turns a row of a result with these columns into this process's uris (None: no
        column holds a path)."""
        if not description:
            return None
        names = [str(d[0]).lower() for d in description]
        plain = [i for i, name in enumerate(names) if name in URI_COLUMNS]
        docs = [i for i, name in enumerate(names) if name in DOC_COLUMNS]
        if not plain and not docs:
            return None
        one, doc = self.from_store, self.doc_from_store

        def read(row: Row) -> Row:
            out: list[Any] | None = None
            for i in plain:
                v = row[i]
                if type(v) is str and v.startswith(_MARK):
                    out = out or list(row)
                    out[i] = one(v)
            for i in docs:
                v = row[i]
                if type(v) is str and '"' + _MARK in v:
                    out = out or list(row)
                    out[i] = doc(v)
            return row if out is None else tuple(out)

        return read


def _opening(starts: list[str]) -> re.Pattern[str]:
    """A quote opening a JSON string that starts with one of `starts` (the first that fits)."""
    return re.compile(r'(\\*)"(' + "|".join(map(re.escape, starts)) + ")")


def _swap(m: re.Match[str], table: dict[str, str]) -> str:
    if len(m.group(1)) % 2:
        return m.group(0)  # a quote inside a string (escaped): text, not a path
    return m.group(1) + '"' + table[m.group(2)]


def absolute_left(kind: str, stored: str | None) -> bool:
    """Does a stored value still hold an absolute `file:` uri (one no root fitted)?"""
    if stored is None:
        return False
    return stored.startswith("file:") if kind == "uri" else '"file:' in stored
