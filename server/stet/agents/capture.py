"""Capture: what an agent wrote into the workspace itself, found and handed to the review.

Most agents write files directly. A capture compares the files with a baseline - the task's
snapshot when there is one, else git's index (or a commit: `base`) - and turns every
difference into a proposal: edits, created, deleted and renamed files (git's rename
detection). Then, in the same durable operation (`Review.capture`), the files get their
baseline back, or keep the agent's version for review (`keep`).

It never throws anyone's text away. A file it cannot capture is left exactly as it is, with
a message: binary content, a symlink, a conflict in git's index, or a file the developer
changed after the agent in the same lines. When the agent's own writes were recorded (the
Claude Code hook does), a file changed after them is split three ways: only the agent's
part is proposed and taken out, the developer's stays.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from urllib.parse import unquote_to_bytes, urlsplit

from ..domain.capture import Refused, layer, layer_files
from ..domain.model import Hunk
from ..domain.proposal import Change, FileOp, TextChange
from ..domain.proposed import Captured, Proposed
from ..domain.rebase import line_edits
from ..domain.shapes import JSON
from ..domain.status import Status
from ..errors import InvalidParams
from ..review import Review
from ..review.snapshot_records import SnapshotSet
from ..workspace import contents, git, tree
from ..workspace.blobs import BlobMissing, digest
from ..workspace.paths import path_to_uri, uri_to_path
from .snapshots import Snapshots, task_key

AUTO = "auto"  # the baseline: the task's snapshot if there is one, else git's index
INDEX = "index"

_UNKNOWN = object()  # no record of what the agent left


@dataclass
class Touched:
    """One file: its baseline, what it holds now, and what the agent left (when recorded)."""

    rel: str
    base: bytes | None
    now: bytes | None
    agent: object = _UNKNOWN  # bytes | None | _UNKNOWN


@dataclass
class Found:
    """What a capture found: the changed files (text, by path), what it must leave alone."""

    baseline: str  # "snapshot", "index" or the git ref
    files: dict[str, tuple[str | None, str | None]] = field(default_factory=dict)  # rel -> (base, now)
    refused: list[Refused] = field(default_factory=list)
    used: list[str] = field(default_factory=list)  # snapshot entries looked at (rel paths)


def _text(data: bytes | None) -> str | None:
    """Text, or None for no file; raises ValueError for binary or non-UTF-8 content."""
    if data is None:
        return None
    if b"\x00" in data:
        raise ValueError("binary")
    return data.decode("utf-8")


def _h(data: bytes | str | None) -> str | None:
    if data is None:
        return None
    return digest(data.encode("utf-8") if isinstance(data, str) else data)


class Capture:
    def __init__(self, review: Review):
        self.review = review
        self.snapshots = Snapshots(review)

    @property
    def root(self) -> str:
        return self.review.ws.roots[0]

    def uri(self, rel: str) -> str:
        return path_to_uri(os.path.join(self.root, rel))

    def rel_of(self, uri: str) -> str | None:
        """The path of a stored uri relative to the root captures work in (None: elsewhere)."""
        path = uri_to_path(uri)
        root = self.root.rstrip("/") + "/"
        return path[len(root) :] if path.startswith(root) else None

    # --- finding what changed ----------------------------------------------------------------
    async def find(self, task_id: str | None, prefixes: list[str], base: str = AUTO) -> Found:
        if base == AUTO:
            current = await self.snapshots.current(task_id)
            if current is not None:
                return await asyncio.to_thread(self._from_snapshot, current, prefixes)
            base = INDEX
        top = await asyncio.to_thread(git.toplevel, self.root)
        if top is None:
            raise InvalidParams(
                f"{self.root} is not in a git work tree and has no snapshot"
                + (f" for task {task_id}" if task_id else "")
                + ": take one before the agent works (`stet snapshot`, `stet task start --snapshot`, or run it "
                "with `stet run`)"
            )
        tree_id = None if base == INDEX else await asyncio.to_thread(git.resolve, top, base)
        found = Found(base)
        await asyncio.to_thread(self._from_git, found, top, tree_id, prefixes, self.root)
        return found

    def _read_now(self, rel: str, found: Found, here: str | None = None) -> tuple[bool, bytes | None]:
        limit = self.review.state.limits.max_bytes
        try:
            return True, contents.read_regular(os.path.join(here or self.root, rel), limit)
        except contents.TooLarge:
            found.refused.append(Refused(rel, _too_large(limit)))
        except contents.NotAFile as exc:
            found.refused.append(Refused(rel, f"{exc}: only regular files are captured; left as it is"))
        except OSError as exc:
            found.refused.append(Refused(rel, f"cannot be read ({exc.strerror or exc}); left as it is"))
        return False, None

    @staticmethod
    def _content(rels: Sequence[str], found: Found, root: str) -> list[str]:
        """The names that can be content: a git folder's files are never content (not even
        named, like `.git`'s); a name that is not UTF-8 is refused, named as it can be shown."""
        out: list[str] = []
        seen: dict[str, bool] = {}
        for rel in rels:
            if tree.in_git_folder(root, rel, seen):
                continue
            if not tree.is_text_name(rel):
                if tree.shown(rel) not in {r.path for r in found.refused}:  # named once
                    found.refused.append(Refused(tree.shown(rel), _NOT_TEXT_NAME))
                continue
            out.append(rel)
        return out

    def _from_snapshot(self, current: SnapshotSet, prefixes: list[str]) -> Found:
        found = Found("snapshot")
        wanted = prefixes or [""]
        seen: list[Touched] = []
        entries: dict[str, tuple[str | None, str | None]] = {}
        for uri, value in current.entries.items():
            rel = self.rel_of(uri)
            if rel is None or not tree.under(rel, wanted):
                continue
            bad = _not_text_uri(uri, self.root)  # recorded before such names were refused
            if bad is not None:
                found.refused.append(Refused(bad, _NOT_TEXT_NAME))
            elif self._content([rel], found, self.root):
                entries[rel] = value
        for rel, (h, agent_h) in sorted(entries.items()):
            found.used.append(rel)
            ok, now = self._read_now(rel, found)
            if not ok:
                continue
            if _h(now) == h and agent_h is None:
                continue  # unchanged: its stored content need not be read
            limit = self.review.state.limits.max_bytes
            try:
                base = self.snapshots.blobs.get(h, limit) if h else None
                agent: object = _UNKNOWN
                if agent_h is not None:
                    agent = self.snapshots.blobs.get(agent_h, limit) if agent_h else None
            except BlobMissing as exc:
                found.refused.append(Refused(rel, f"{exc}; left as it is"))
                continue
            seen.append(Touched(rel, base, now, agent))
        if current.whole:
            new = [
                rel
                for rel in tree.files(self.root)
                if rel not in entries and tree.under(rel, wanted) and not tree.under(rel, current.consumed)
            ]
            for rel in self._content(new, found, self.root):
                ok, now = self._read_now(rel, found)
                if ok and now is not None:
                    seen.append(Touched(rel, None, now))
        self._judge(seen, found)
        return found

    def _from_git(
        self, found: Found, top: str, tree_id: str | None, prefixes: list[str], here: str, gitdir: str | None = None
    ) -> None:
        """The files of `here` (the workspace root, or the same folder in a worktree of the
        repository at `top`, whose git folder is `gitdir`) that differ from git's index
        (tree_id None) or from a tree."""
        inside = os.path.relpath(here, top).replace(os.sep, "/")
        cut = "" if inside == "." else inside + "/"
        wanted = prefixes or [""]
        names = [n[len(cut) :] for n in git.changed(top, tree_id, gitdir) if n.startswith(cut)]
        names = self._content([n for n in names if tree.under(n, wanted) and not tree.is_own(n)], found, here)
        entries = git.entries(top, tree_id, gitdir)
        shas = {}
        for rel in names:
            mode, sha = entries.get(cut + rel, ("", ""))
            if mode == "conflict":
                found.refused.append(Refused(rel, "unmerged in git's index: resolve the conflict first; left as it is"))
            elif mode == "120000":
                found.refused.append(Refused(rel, "a symlink in git: only regular files are captured; left as it is"))
            elif mode == "160000":
                continue  # a submodule: its own repository
            elif mode:
                shas[rel] = sha
        limit = self.review.state.limits.max_bytes
        sizes = git.sizes(top, shas.values(), gitdir)
        for rel in [r for r, sha in shas.items() if sizes[sha] > limit]:
            found.refused.append(Refused(rel, _too_large(limit)))  # its baseline: never read
            del shas[rel]
        blobs = git.contents(top, shas.values(), gitdir)
        seen = []
        refused = {r.path for r in found.refused}
        for rel in names:
            if rel in refused or entries.get(cut + rel, ("",))[0] == "160000":
                continue
            ok, now = self._read_now(rel, found, here)
            if ok:
                seen.append(Touched(rel, blobs[shas[rel]] if rel in shas else None, now))
        self._judge(seen, found)

    def _judge(self, seen: Sequence[Touched], found: Found) -> None:
        """Keep the files that changed and can be captured; refuse the others, saying why."""
        limit = self.review.state.limits.max_bytes
        # A file refused because a folder took its place: what is in that folder stays with it.
        folders = [r.path for r in found.refused if os.path.isdir(os.path.join(self.root, r.path))]
        for s in seen:
            if tree.under(s.rel, folders):
                found.refused.append(Refused(s.rel, "inside a folder that took a file's place; left as it is"))
                continue
            if s.base == s.now:
                continue
            base = s.base
            if s.agent is not _UNKNOWN and _h(s.now) != _h(s.agent):  # type: ignore[arg-type]
                # Changed after the agent's last write: by the developer, or another tool.
                merged = None
                if s.now is not None and s.agent is not None and base is not None:
                    try:
                        merged = git.merge(s.now, s.agent, base)  # type: ignore[arg-type]
                    except InvalidParams:
                        merged = None
                if merged is None:
                    found.refused.append(
                        Refused(
                            s.rel,
                            "changed after the agent's last write by someone else, in the agent's lines: "
                            "which part is whose cannot be told; left as it is",
                        )
                    )
                    continue
                base = merged  # the developer's version without the agent's part
                if base == s.now:
                    continue
            if max(len(base or b""), len(s.now or b"")) > limit:
                found.refused.append(Refused(s.rel, _too_large(limit)))
                continue
            try:
                found.files[s.rel] = (_text(base), _text(s.now))
            except (ValueError, UnicodeDecodeError):
                found.refused.append(Refused(s.rel, "binary or not UTF-8: Stet reviews text; left as it is"))

    def from_worktree(self, worktree: str, tree_id: str, gitdir: str) -> Found:
        """What an agent changed in a worktree since `tree_id` (the tree it started from); git
        is told the worktree's git folder (checked: worktrees.check), never reads its `.git`."""
        top = git.toplevel(self.root) or self.root
        here = os.path.join(worktree, os.path.relpath(self.root, top))
        found = Found("worktree")
        self._from_git(found, worktree, tree_id, [], os.path.realpath(here), gitdir)
        return found

    def onto_workspace(self, found: Found) -> dict[str, tuple[str | None, str | None]]:
        """The agent's changes made in a worktree, carried onto the workspace's files as they are
        now (the developer may have changed them meanwhile): (text now, text it becomes) per
        file. A file whose change does not fit what the developer did is refused, left alone."""
        out: dict[str, tuple[str | None, str | None]] = {}
        for rel, (base, new) in sorted(found.files.items()):
            ok, data = self._read_now(rel, found)
            if not ok:
                continue
            try:
                here = _text(data)
            except (ValueError, UnicodeDecodeError):
                found.refused.append(Refused(rel, "binary or not UTF-8 in the workspace; left as it is"))
                continue
            if here == new:
                continue
            if here == base:
                out[rel] = (here, new)
            elif base is None or new is None or here is None:
                what = "created" if base is None else "deleted" if new is None else "changed"
                found.refused.append(
                    Refused(rel, f"{what} by the agent, but the workspace's file changed meanwhile; not proposed")
                )
            else:
                merged = git.merge(here.encode(), base.encode(), new.encode())
                if merged is None:
                    found.refused.append(
                        Refused(
                            rel, "changed by the agent and, meanwhile, in the workspace in the same lines; not proposed"
                        )
                    )
                    continue
                out[rel] = (here, merged.decode("utf-8"))
        return out

    # --- from what changed to a proposal ------------------------------------------------------
    def layered(
        self, found: Found, task_id: str | None, *, exact: bool = False
    ) -> dict[str, tuple[str | None, str | None]]:
        """Each changed file's baseline with what Stet knows to be in the files put in: the
        developer's accepted hunks and other reviews' kept ones; this review's kept hunks out.
        File operations first (a file the developer accepted creating is no agent's new file),
        then the edits, wherever the file is by then. `exact`: the baseline is the file as it
        is (an edit reported before it is made): nothing put in, only this task's kept hunks
        taken out where their text is (kept hunks may be recorded before their text is written)."""

        def known(h: Hunk) -> bool:
            if exact:
                return False
            return h.status == Status.APPLIED or (h.kept and h.status == Status.PENDING and h.task_id != task_id)

        def own(h: Hunk) -> bool:
            # Stale too: the agent changed its kept text again (the snapshot still has it).
            return h.kept and h.status in (Status.PENDING, Status.STALE) and h.task_id == task_id

        by_uri = {self.uri(rel): rel for rel in found.files}
        hunks = [h for h in self.review.hunks.values() if h.uri in by_uri or (h.new_uri or "") in by_uri]
        ops = [h for h in hunks if h.kind != "edit"]
        bases = layer_files(
            {uri: found.files[rel][0] for uri, rel in by_uri.items()},
            [h for h in ops if known(h)],
            [h for h in ops if own(h)],
        )
        out = {}
        for uri, rel in by_uri.items():
            base, now = bases[uri], found.files[rel][1]
            if base is not None:
                edits = [h for h in self.review.by_uri.get(uri, {}).values() if h.kind == "edit"]
                base = layer(base, [h for h in edits if known(h)], [h for h in edits if own(h)])
            if base != now:
                out[rel] = (base, now)
        return out

    @staticmethod
    def renamed(files: Mapping[str, tuple[str | None, str | None]]) -> dict[str, str]:
        """new path -> old path, for deleted files git sees as renamed to created ones."""
        deleted = {rel: (b or "").encode() for rel, (b, n) in files.items() if b is not None and n is None}
        created = {rel: (n or "").encode() for rel, (b, n) in files.items() if b is None and n is not None}
        try:
            return {new: old for old, new in git.renames(deleted, created)}
        except InvalidParams:
            return {}  # no git here: a rename is proposed as a delete and a create

    def changes(
        self, files: Mapping[str, tuple[str | None, str | None]], renames: Mapping[str, str]
    ) -> tuple[list[Change], dict[str, str | None], dict[str, str | None]]:
        """The WorkspaceEdit changes, the text each file is planned from, and the text it becomes."""
        changes: list[Change] = []
        bases: dict[str, str | None] = {}
        results: dict[str, str | None] = {}
        sources = set(renames.values())
        for rel, (base, now) in sorted(files.items()):
            uri = self.uri(rel)
            if rel in sources:
                continue  # with its new name below
            if rel in renames:
                old = renames[rel]
                old_uri = self.uri(old)
                old_base = files[old][0] or ""
                changes.append(FileOp("rename", old_uri, uri))
                if old_base != now:
                    changes.append(TextChange(uri, None, line_edits(old_base, now or "")))
                bases.update({old_uri: old_base, uri: None})
                results.update({old_uri: None, uri: now})
            elif base is None:
                changes.append(FileOp("create", uri))
                if now:
                    changes.append(TextChange(uri, None, [(_start(), now)]))
                bases[uri], results[uri] = None, now
            elif now is None:
                changes.append(FileOp("delete", uri))
                bases[uri], results[uri] = base, None
            else:
                changes.append(TextChange(uri, None, line_edits(base, now)))
                bases[uri], results[uri] = base, now
        return changes, bases, results

    # --- the whole operation -------------------------------------------------------------------
    async def run(
        self,
        *,
        paths: Sequence[str] = (),
        task_id: str | None = None,
        capture_id: str | None = None,
        message: str | None = None,
        agent: str | None = None,
        keep: bool = False,
        base: str = AUTO,
        turn_of: str | None = None,
    ) -> Captured:
        """Capture what changed since the baseline; the answer of `Review.capture`, plus what was
        refused and which baseline was used (`proposal_id` None: nothing new to propose).
        `turn_of`: the agent's session this capture is the next turn of."""
        prefixes = [self.snapshots.rel(p) for p in paths]
        await self.review.sync()  # the developer may have decided meanwhile (layered below)
        found = await self.find(task_id, prefixes, base)
        files = self.layered(found, task_id)
        consume = None
        if found.baseline == "snapshot":
            left = {r.path for r in found.refused}
            consume = (task_key(task_id), [self.uri(r) for r in found.used if r not in left], prefixes or [""])
        if not files:
            return nothing(found.baseline, found.refused, keep=keep)
        renames = await asyncio.to_thread(self.renamed, files)
        changes, bases, results = self.changes(files, renames)
        key = _key(
            ["in-place", keep, task_id, found.baseline, sorted((r, _h(b), _h(n)) for r, (b, n) in files.items())]
        )
        answer = await self.review.capture(
            capture_id or "c-" + key[:16],
            changes,
            bases,
            results,
            keep=keep,
            task_id=task_id,
            agent=agent,
            message=message,
            edit_hash=key,
            consume=consume,
            turn_of=turn_of,
        )
        if consume is not None:
            await self.snapshots.collect()
        return replace(answer, baseline=found.baseline, refused=tuple(found.refused), keep=keep)

    async def from_worktree_run(
        self,
        worktree: str,
        tree_id: str,
        gitdir: str,
        *,
        task_id: str | None,
        message: str | None,
        agent: str | None,
        cleanup: JSON | None,
    ) -> Captured:
        """Propose what an agent changed in `worktree` since `tree_id` into the workspace (whose
        files are not written); `cleanup` (remove the worktree) is journaled with it."""
        await self.review.sync()
        found = await asyncio.to_thread(self.from_worktree, worktree, tree_id, gitdir)
        files = await asyncio.to_thread(self.onto_workspace, found)
        if not files:
            return nothing("worktree", found.refused, keep=False)
        renames = await asyncio.to_thread(self.renamed, files)
        changes, bases, results = self.changes(files, renames)
        key = _key(["worktree", task_id, tree_id, sorted((r, _h(b), _h(n)) for r, (b, n) in files.items())])
        answer = await self.review.capture(
            "c-" + key[:16],
            changes,
            bases,
            results,
            keep=False,
            in_place=False,
            task_id=task_id,
            agent=agent,
            message=message,
            edit_hash=key,
            cleanup=None if found.refused else cleanup,
        )
        return replace(answer, baseline="worktree", refused=tuple(found.refused), keep=False)


_NOT_TEXT_NAME = "its name is not UTF-8: Stet reviews files whose names are text; left as it is"


def _not_text_uri(uri: str, root: str) -> str | None:
    """The name (as it can be shown) of a file whose uri names bytes that are not UTF-8."""
    path = unquote_to_bytes(urlsplit(uri).path)
    try:
        path.decode("utf-8")
    except UnicodeDecodeError:
        return tree.shown(os.path.relpath(os.fsdecode(path), root))
    return None


def _too_large(limit: int) -> str:
    return f"larger than {limit} bytes; left as it is"


def _start() -> JSON:
    return {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}


def _key(parts: object) -> str:
    # surrogatepass: the same bytes for every text, and no crash on a name that came in as bytes.
    text = json.dumps(parts, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def nothing(baseline: str, refused: Sequence[Refused] = (), *, keep: bool) -> Captured:
    """The answer of a capture that proposes nothing."""
    return Captured(Proposed(None), baseline=baseline, refused=tuple(refused), keep=keep)
