"""From a WorkspaceEdit to the hunks a developer reviews.

The edit's changes are played in order over a small virtual file system: text edits,
file creations, renames and deletions. What remains at the end becomes hunks: for each
file that existed, a delete, or a rename plus the edits made to it (they follow the file
when the rename is applied); for each new file, one create hunk holding its content.
Pure: file contents come in through `load`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from .edits import OverlappingEdits, apply_text_edits
from .hunks import EDGE, HunkSpec, diff_hunks
from .model import Hunk, Kind
from .shapes import TextEdit
from .status import Status
from .text import _BREAK, detect_eol, split_lines


class BadProposal(ValueError):
    """The proposal cannot be played (a missing file, overlapping edits, ...): the caller's input."""


class VersionMismatch(ValueError):
    """A versioned edit names a buffer version other than the editor's."""


@dataclass
class TextChange:
    uri: str
    version: int | None
    edits: list[TextEdit]  # (LSP range, new text), relative to the file as it is then


@dataclass
class FileOp:
    kind: str  # create | rename | delete
    uri: str
    new_uri: str | None = None
    overwrite: bool = False
    ignore_if_exists: bool = False
    ignore_if_not_exists: bool = False


Change = TextChange | FileOp


@dataclass
class Planned:
    """One hunk to be: `spec` holds the lines (for create/delete: the whole file)."""

    kind: Kind
    uri: str
    spec: HunkSpec
    new_uri: str | None = None

    def hunk(
        self, hunk_id: str, proposal_id: str, seq: int, task_id: str | None, message: str | None, kept: bool = False
    ) -> Hunk:
        """The pending hunk this plan becomes (the same for a proposal and a capture)."""
        return Hunk(
            id=hunk_id,
            proposal_id=proposal_id,
            task_id=task_id,
            seq=seq,
            uri=self.uri,
            kind=self.kind,
            status=Status.PENDING,
            line=self.spec.start,
            old=self.spec.old,
            new=self.spec.new,
            ctx_before=self.spec.ctx_before,
            ctx_after=self.spec.ctx_after,
            new_uri=self.new_uri,
            message=message,
            kept=kept,
        )


@dataclass
class _File:
    origin: str | None  # where it was before the proposal; None when the proposal creates it
    base: str | None  # its text before the proposal
    text: str | None  # its text now (None: gone)


@dataclass
class Plan:
    hunks: list[Planned] = field(default_factory=list)
    results: dict[str, str | None] = field(default_factory=dict)  # uri -> final text (None: deleted)


WHOLE_FILE = ((EDGE,), (EDGE,))


def plan(changes: list[Change], load: Callable[[str, int | None], str | None], *, exact: bool = False) -> Plan:
    """Play `changes` in order. `load(uri, version)` gives a file's current text (None when it
    does not exist) and raises when a given version is not the buffer's. `exact`: the new
    text is written with its own line terminators (a capture of what is already in a file)."""
    files: dict[str, _File] = {}  # current location -> file
    seen: set[str] = set()  # locations whose pre-proposal state was looked at

    def at(uri: str, version: int | None = None) -> _File | None:
        if uri not in files and uri not in seen:
            seen.add(uri)
            text = load(uri, version)
            if text is not None:
                files[uri] = _File(uri, text, text)
        f = files.get(uri)
        return f if f is not None and f.text is not None else None

    for change in changes:
        if isinstance(change, TextChange):
            f = at(change.uri, change.version)
            if f is None:
                raise BadProposal(f"{change.uri} does not exist (create it with a CreateFile first)")
            # The file's own line terminator; a file with no line break yet (one this proposal
            # creates) has none, so the agent's text keeps its own.
            known = f.base or f.text or ""
            eol = detect_eol(known) if _BREAK.search(known) and not exact else None
            try:
                f.text = apply_text_edits(f.text or "", change.edits, eol)
            except OverlappingEdits as exc:
                raise BadProposal(f"{change.uri}: {exc}") from None
        elif change.kind == "create":
            f = at(change.uri)
            if f is not None:
                if change.overwrite:
                    f.text = ""
                elif not change.ignore_if_exists:
                    raise BadProposal(f"cannot create {change.uri}: it exists (set overwrite or ignoreIfExists)")
                continue
            files[change.uri] = _File(None, None, "")
        elif change.kind == "delete":
            f = at(change.uri)
            if f is None:
                if change.ignore_if_not_exists:
                    continue
                raise BadProposal(f"cannot delete {change.uri}: it does not exist")
            f.text = None
        elif change.kind == "rename":
            if change.new_uri is None:
                raise BadProposal("a RenameFile needs newUri")
            f = at(change.uri)
            if f is None:
                raise BadProposal(f"cannot rename {change.uri}: it does not exist")
            target = at(change.new_uri)
            if target is not None:
                if change.ignore_if_exists and not change.overwrite:
                    continue
                if not change.overwrite:
                    raise BadProposal(f"cannot rename to {change.new_uri}: it exists (set overwrite)")
                if target.origin is not None:
                    raise BadProposal(
                        f"renaming over an existing file ({change.new_uri}) is not supported; delete it first"
                    )
            files[change.new_uri] = _File(f.origin, f.base, f.text)
            f.text = None  # gone from its old place
        else:
            raise BadProposal(f"unknown file operation {change.kind!r}")
    return _result(files)


def _result(files: dict[str, _File]) -> Plan:
    """The hunks and final texts of the files as the changes left them (by current location)."""
    result = Plan()
    by_origin: dict[str, tuple[str, _File]] = {}
    for uri, f in files.items():
        if f.origin is not None and f.text is not None:
            by_origin[f.origin] = (uri, f)
    for uri, f in files.items():
        if f.origin is None:
            if f.text is not None:  # created here
                result.hunks.append(Planned(Kind.CREATE, uri, HunkSpec(0, (), tuple(split_lines(f.text)), *WHOLE_FILE)))
                result.results[uri] = f.text
            continue
        if uri != f.origin:
            continue  # a file's new location: handled with its origin below
        if f.origin in by_origin:
            now, moved = by_origin[f.origin]
            if now != f.origin:
                result.hunks.append(Planned(Kind.RENAME, f.origin, HunkSpec(0, (), (), *WHOLE_FILE), new_uri=now))
                result.results[f.origin] = None
            for spec in diff_hunks(moved.base or "", moved.text or ""):
                result.hunks.append(Planned(Kind.EDIT, f.origin, spec))
            result.results[now] = moved.text
        else:  # gone at the end
            result.hunks.append(
                Planned(Kind.DELETE, f.origin, HunkSpec(0, tuple(split_lines(f.base or "")), (), *WHOLE_FILE))
            )
            result.results[f.origin] = None
    return result


def check_version(uri: str, wanted: int | None, actual: int | None) -> None:
    if wanted is not None and actual is not None and wanted != actual:
        raise VersionMismatch(f"{uri} is at version {actual} in the editor, the edit expects {wanted}")
