"""A commit keeps: when HEAD moved, the kept hunks waiting for review whose new text a commit
that HEAD reaches holds at its place are accepted by that commit (domain/commit_keep.py).

Any process that brings the review up to date does it; each hunk's accept has the op id of
its hunk and commit, so two processes noticing the same HEAD at once, or one killed mid-way
and started again, log it once (a replay of the op changes nothing). The HEAD last looked at
is remembered beside the store (review/heads_seen.py), a hint that spares the look when HEAD
did not move.

Off in a workspace by `git config stet.commitKeeps false`, or STET_COMMIT_KEEPS=off.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping

from ..domain import commit_keep
from ..domain.anchor import LineIndex
from ..domain.model import Hunk, Kind
from ..domain.status import Decide
from ..domain.text import split_lines
from ..errors import StetError
from ..workspace import git
from . import heads_seen
from .deciding import Deciding
from .state import ReviewState

# How far back through the commits that changed a file a hunk's text is followed, to name
# the commit that put it there.
MOST_COMMITS = 20
OFF = heads_seen.OFF


def turned_off(top: str) -> bool:
    """The checkout's `git config stet.commitKeeps false` (its HEAD is recorded as looked at:
    turned on again, the next HEAD is looked at)."""
    try:
        p = git.run(top, "config", "--local", "--get", "stet.commitKeeps", ok=(0, 1))
    except git.GitError:
        return False
    return p.stdout.decode("utf-8", "replace").strip().lower() in OFF


class CommitKeeps:
    """What a commit keeps, noticed when HEAD moved."""

    def __init__(self, state: ReviewState, deciding: Deciding):
        self.st = state
        self.deciding = deciding
        self._dirs: dict[str, tuple[str, str, str] | None] = {}  # root -> git.dirs (asked once)
        self._seen: dict[str, tuple[str, ...]] = {}  # root -> what this process recorded last

    async def notice(self, env: Mapping[str, str] | None = None) -> set[str]:
        """Accept what the commits HEAD moved to keep; the uris of the hunks decided."""
        kept = [h for h in self.st.hunks.values() if commit_keep.eligible(h)]
        if not kept:
            return set()
        found, looked = await asyncio.to_thread(self._look, kept, os.environ if env is None else env)
        decided: set[str] = set()
        for hid, commit in found:
            try:
                await self.deciding.decide(
                    Decide.ACCEPT, [hid], request_id=commit_keep.op_id(hid, commit), by_commit=commit
                )
            except StetError:
                continue  # decided otherwise meanwhile (a Conflict): the developer's stands
            h = self.st.hunks.get(hid)
            if h is not None:
                decided.add(h.uri)
        if looked:  # recorded once decided: a kill before leaves it to be looked at again
            self._seen.update(looked)
            home = heads_seen.home_of(self.st.ws.roots)
            await asyncio.to_thread(lambda: heads_seen.write(home, {**heads_seen.read(home), **looked}))
        return decided

    def _git_dirs(self, root: str) -> tuple[str, str, str] | None:
        if root not in self._dirs:
            self._dirs[root] = git.dirs(root)
        return self._dirs[root]

    def _root(self, uri: str) -> str | None:
        path = self.st.ws.path_of(uri)
        return next((r for r in self.st.ws.roots if path.startswith(r.rstrip(os.sep) + os.sep)), None)

    def _look(
        self, kept: list[Hunk], env: Mapping[str, str]
    ) -> tuple[list[tuple[str, str]], dict[str, tuple[str, ...]]]:
        """(hunk id, the commit that put its text there) of each kept hunk a commit keeps, in the
        work trees whose HEAD moved since Stet last looked; and what to record of their roots."""
        seen = {**heads_seen.read(heads_seen.home_of(self.st.ws.roots)), **self._seen}
        now: dict[str, tuple[str, ...]] = {}
        for root in self.st.ws.roots:
            if heads_seen.unchanged(seen.get(root)):
                continue  # its HEAD's files are as recorded: nothing moved
            d = self._git_dirs(root)
            if d is None:
                now[root] = ("", "", "", "", "")
                continue
            stamp = git.head_stamp(d[1], d[2])  # before HEAD is read: a move meanwhile changes it again
            try:
                now[root] = (*d, git.head(d[0]) or "", stamp)
            except git.GitError:
                continue  # git could not tell: looked at again at the next call
        moved = {e[0]: e[3] for root, e in now.items() if e[3] and (seen.get(root) or ("",) * 5)[3] != e[3]}
        if not moved:
            return [], now
        by_top: dict[str, list[Hunk]] = {}
        for h in kept:
            try:
                at = self._root(h.uri)
            except StetError:  # outside this workspace's roots: decided where it is a root
                continue
            top = now.get(at, ("",))[0] if at is not None else ""
            if top in moved:
                by_top.setdefault(top, []).append(h)
        out: list[tuple[str, str]] = []
        for top in moved:
            try:
                if env.get("STET_COMMIT_KEEPS", "").strip().lower() in OFF:
                    now = {r: e for r, e in now.items() if e[0] != top}  # looked at when on again
                elif by_top.get(top) and not turned_off(top):
                    out += self._in_top(top, by_top[top])
            except (git.GitError, OSError, ValueError):
                now = {r: e for r, e in now.items() if e[0] != top}  # git could not tell: again next call
        return out, now

    def _name(self, top: str, uri: str | None) -> str | None:
        if uri is None:
            return None
        return os.path.relpath(self.st.ws.path_of(uri), top).replace(os.sep, "/")

    def _in_top(self, top: str, hunks: list[Hunk]) -> list[tuple[str, str]]:
        limit = self.st.limits.max_bytes
        names = {h.id: self._name(top, h.new_uri if h.kind == Kind.RENAME else h.uri) for h in hunks}
        history = {n: git.commits_touching(top, n, MOST_COMMITS) for n in set(names.values()) if n is not None}
        wanted = [(c, n) for n, commits in history.items() for c in commits]
        olds = {h.id: self._name(top, h.uri) for h in hunks if h.kind == Kind.RENAME}
        wanted += [(c, o) for h in hunks if (o := olds.get(h.id)) for c in history.get(names[h.id] or "", [])]
        versions = _Versions(git.files_at(top, wanted, limit))
        out = []
        for h in hunks:
            name = names[h.id]
            commits = history.get(name or "", [])
            held = (versions.hold(h, c, name, olds.get(h.id)) for c in commits)  # lazily: HEAD first
            first = commit_keep.first_keeping(held)
            if first is not None:
                out.append((h.id, commits[first]))
        return out


class _Versions:
    """The files as the commits hold them, each decoded and its lines indexed once for every
    hunk asked of it (thousands of kept hunks in one file cost one index per commit, not one
    each)."""

    def __init__(self, texts: Mapping[tuple[str, str], bytes | None]) -> None:
        self.texts = texts
        self.cache: dict[tuple[str, str], tuple[str | None, LineIndex | None]] = {}

    def text(self, commit: str, name: str | None) -> tuple[str | None, LineIndex | None]:
        if name is None:
            return None, None
        key = (commit, name)
        if key not in self.cache:
            data = self.texts.get(key)
            try:
                text = data.decode("utf-8") if data is not None else None
            except UnicodeDecodeError:
                text = None
            self.cache[key] = (text, LineIndex(split_lines(text)) if text is not None else None)
        return self.cache[key]

    def hold(self, h: Hunk, commit: str, name: str | None, old: str | None) -> bool:
        if h.kind == Kind.RENAME:
            return commit_keep.kept_in(h, self.text(commit, old)[0], self.text(commit, name)[0])
        text, index = self.text(commit, name)
        return commit_keep.kept_in(h, text, index=index)
