"""Hunks back to a unified diff that `git apply` takes (pure: texts in, text out).

The diff goes from the file *without* the chosen hunks to the file *with* them. For a
hunk not applied yet (pending, accepted, rejected...) the file on disk holds its old text,
so that side is the file as it is now; for an applied hunk the file holds its new text,
so the "without" side is the file with that hunk reverted. `git apply --check` therefore
takes an export of pending/accepted hunks on the current tree, and `git apply -R --check`
confirms that applied hunks are in it. File operations follow the same rule: a created file
is a "new file" diff, a deleted one a "deleted file" diff of the text it had, a renamed one a
rename with the edits made to it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from .anchor import LineIndex, locate
from .hunks import Lines, TextMismatch, apply_edits
from .model import Hunk, Kind
from .patches import format_file
from .status import Status
from .text import split_lines


@dataclass
class Exported:
    diff: str = ""
    hunk_ids: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (hunk id, why)
    without: str | None = None  # the file without the chosen hunks
    with_: str | None = None  # the file with them


def export_file(path: str, current: str | None, hunks: list[Hunk], new_path: str | None = None) -> Exported:
    """The diff of one file's edit hunks (`new_path`: the file is renamed too)."""
    out = _sides(path, current, hunks)
    if out.hunk_ids or (new_path and new_path != path and current is not None):
        out.diff = format_file(path, new_path or path, out.without, out.with_)
    return out


def _in(h: Hunk) -> bool:
    """Is the hunk's new text in the file (applied, or kept there for review)?"""
    return h.status == Status.APPLIED or (h.kept_pending and h.in_file_state() is True)


# (first line, the text there, the text it becomes, hunk)
_Edit = tuple[int, Lines, Lines, Hunk]


def _sides(path: str, current: str | None, hunks: list[Hunk]) -> Exported:
    out = Exported()
    if current is None:
        out.skipped = [(h.id, f"{path} does not exist") for h in hunks]
        return out
    out.without = out.with_ = current
    lines = split_lines(current)
    index = LineIndex(lines)
    revert: list[_Edit] = []  # applied hunks, to take out for the "without" side
    forward: list[_Edit] = []  # the others, to put in for the "with" side
    for h in sorted(hunks, key=lambda h: (h.line, h.seq)):
        applied = _in(h)
        there = h.replacement if applied else h.old
        found = locate(index, there, h.line, h.ctx_before, h.ctx_after)
        if found is None:
            out.skipped.append((h.id, f"its {'new' if applied else 'old'} text is no longer in {path}"))
            continue
        edit = (found.line, there, h.old if applied else h.replacement, h)
        (revert if applied else forward).append(edit)
    kept: list[_Edit] = []
    end = -1
    for e in sorted(revert + forward, key=lambda e: (e[0], len(e[1]))):
        if e[0] < end or (e[0] == end and not e[1] and kept and not kept[-1][1]):
            out.skipped.append((e[3].id, "it overlaps another exported hunk"))
            continue
        kept.append(e)
        end = e[0] + len(e[1])
    try:
        without = apply_edits(lines, [(s, a, b) for s, a, b, h in kept if _in(h)])
        with_ = apply_edits(lines, [(s, a, b) for s, a, b, h in kept if not _in(h)])
    except TextMismatch as exc:  # cannot happen after locate; refuse rather than write a wrong diff
        out.skipped.extend((e[3].id, str(exc)) for e in kept)
        return out
    out.hunk_ids = [e[3].id for e in kept]
    out.without, out.with_ = "".join(without), "".join(with_)
    return out


def export(hunks: list[Hunk], rel: Callable[[str], str], read: Callable[[str], str | None]) -> Exported:
    """Every chosen hunk, file operations included, as one diff (files in path order).

    `rel(uri)` names a file for the diff; `read(uri)` gives its text now (None: missing).
    """
    out = Exported()
    edits: dict[str, list[Hunk]] = {}
    parts: list[tuple[str, str]] = []
    renames = [(h, h.new_uri) for h in hunks if h.kind == Kind.RENAME and h.new_uri]
    for h in hunks:
        if h.kind == Kind.EDIT:
            edits.setdefault(h.uri, []).append(h)
    for r, new_uri in renames:
        # An applied rename moved the file, and its edit hunks with it.
        where = new_uri if _in(r) else r.uri
        current = read(where)
        if current is None:
            out.skipped.append((r.id, f"{rel(where)} does not exist"))
            continue
        part = export_file(rel(r.uri), current, edits.pop(where, []), new_path=rel(new_uri))
        out.hunk_ids += [r.id] + part.hunk_ids
        out.skipped += part.skipped
        parts.append((rel(r.uri), part.diff))
    for h in hunks:
        if h.kind == Kind.CREATE:
            parts.append((rel(h.uri), format_file(rel(h.uri), rel(h.uri), None, h.new_text)))
            out.hunk_ids.append(h.id)
        elif h.kind == Kind.DELETE:
            current = read(h.uri)
            if not _in(h) and current != h.old_text:
                out.skipped.append((h.id, f"{rel(h.uri)} changed since the deletion was proposed"))
                continue
            parts.append((rel(h.uri), format_file(rel(h.uri), rel(h.uri), h.old_text, None)))
            out.hunk_ids.append(h.id)
    for uri, group in edits.items():
        part = export_file(rel(uri), read(uri), group)
        out.hunk_ids += part.hunk_ids
        out.skipped += part.skipped
        parts.append((rel(uri), part.diff))
    out.diff = "".join(d for _, d in sorted(parts, key=lambda p: p[0]))
    return out
