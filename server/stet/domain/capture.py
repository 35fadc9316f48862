"""Capture: what an agent changed in the files since a baseline, and what the files hold after.

Pure rules, no I/O. The baseline a capture compares with is the file before the agent
(a snapshot, or git's version) with what Stet itself knows to be in the file put in
(`layer`): hunks the developer accepted, and kept hunks of other reviews; a review's own
kept hunks are taken back out, so capturing again re-proposes them whole instead of
stacking a second hunk on top. After the proposal is stored each file gets the text
`settle` computes: the baseline (a capture that restores), or the agent's version with
only what the developer already refused taken out (a capture that keeps); a kept hunk is
anchored in that text (`kept_anchors`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from .anchor import LineIndex, locate
from .hunks import Context, Shifts, TextMismatch, apply_edits, context_around, edit_order
from .model import Hunk, Kind
from .proposal import Planned
from .text import split_lines


@dataclass(frozen=True, slots=True)
class Snapped:
    """What a snapshot recorded: how many files (`files`), how many of them it had not recorded
    before (`new`), whether the task's snapshot is of the whole workspace, and notes for the
    user (files it left out, and why)."""

    task_id: str | None
    whole: bool
    files: int
    new: int
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Refused:
    """A file the capture leaves alone, and why (said to the user as it is)."""

    path: str
    why: str


def layer(base: str, onto: Iterable[Hunk], out_of: Iterable[Hunk]) -> str:
    """`base` with the edits of `onto` made (where their old text is and their new text is
    not) and those of `out_of` taken back (where their new text is). A hunk whose text
    cannot be placed exactly is left out: the baseline is then what the file said."""
    lines = split_lines(base)
    index = LineIndex(lines)
    edits: list[tuple[int, tuple[str, ...], tuple[str, ...]]] = []
    for h, forward in [*((h, True) for h in onto), *((h, False) for h in out_of)]:
        if h.kind != Kind.EDIT:
            continue
        there, becomes = (h.old, h.replacement) if forward else (h.replacement, h.old)
        if (
            forward
            and h.replacement
            and locate(index, h.replacement, h.line, h.ctx_before, h.ctx_after, trust_hint=False)
        ):
            continue  # already in
        found = locate(index, there, h.line, h.ctx_before, h.ctx_after, trust_hint=False)
        if found is not None:
            edits.append((found.line, there, becomes))
    kept: list[tuple[int, tuple[str, ...], tuple[str, ...]]] = []
    end = -1
    for e in sorted(edits, key=lambda e: (e[0], len(e[1]))):
        if e[0] < end:
            continue  # two hunks over the same lines: neither is certain
        kept.append(e)
        end = e[0] + len(e[1])
    try:
        return "".join(apply_edits(lines, kept))
    except TextMismatch:
        return base


def layer_files(bases: Mapping[str, str | None], onto: Iterable[Hunk], out_of: Iterable[Hunk]) -> dict[str, str | None]:
    """The file operations of `layer`: created, deleted and renamed files (by uri) as Stet
    knows them - the baselines of `bases` with `onto`'s operations made where they fit, and
    `out_of`'s taken back. Only files in `bases` are looked at."""
    out = dict(bases)
    for h, forward in [*((h, True) for h in onto), *((h, False) for h in out_of)]:
        if h.kind == Kind.CREATE:
            before, after = (None, h.new_text) if forward else (h.new_text, None)
            if h.uri in out and out[h.uri] == before:
                out[h.uri] = after
        elif h.kind == Kind.DELETE:
            before, after = (h.old_text, None) if forward else (None, h.old_text)
            if h.uri in out and out[h.uri] == before:
                out[h.uri] = after
        elif h.kind == Kind.RENAME and h.new_uri is not None:
            src, dst = (h.uri, h.new_uri) if forward else (h.new_uri, h.uri)
            if src in out and dst in out and out[src] is not None and out[dst] is None:
                out[dst], out[src] = out[src], None
    return out


def settle(
    planned: Sequence[Planned],
    bases: Mapping[str, str | None],
    stays: Sequence[bool],
) -> dict[str, str | None]:
    """Each file's text after the capture (None: no file): its baseline with the planned
    hunks that stay in the file (`stays[i]` for `planned[i]`) made again.

    A rename's edits are planned on the file's old uri; they land where the file ends up."""
    out: dict[str, str | None] = {}
    moved: dict[str, str] = {}  # old uri -> new uri, for renames that stay
    for p, stay in zip(planned, stays):
        if p.kind == Kind.RENAME and p.new_uri is not None:
            out.setdefault(p.new_uri, None)
            if stay:
                moved[p.uri] = p.new_uri
        elif p.kind == Kind.CREATE:
            out[p.uri] = "".join(p.spec.new) if stay else None
        elif p.kind == Kind.DELETE and stay:
            out[p.uri] = None
    for uri, base in bases.items():
        if uri in out and (base is None or uri not in moved):
            continue  # a created file or a kept delete is settled above
        if base is None:
            continue
        edits = [
            (p.spec.start, p.spec.old, p.spec.new)
            for p, stay in zip(planned, stays)
            if stay and p.kind == Kind.EDIT and p.uri == uri
        ]
        text = "".join(apply_edits(split_lines(base), edits))
        if uri in moved:
            out[uri] = None
            out[moved[uri]] = text
        else:
            out[uri] = text
    return out


def kept_anchors(
    planned: Sequence[Planned],
    bases: Mapping[str, str | None],
    stays: Sequence[bool],
) -> dict[int, tuple[int, Context, Context]]:
    """For each planned edit that stays in the file (by its index in `planned`): the first line
    of its new text in the file's text after the capture (`settle`'s), and its context there.
    The agent's text left for review is what the file shows: a kept hunk's context is taken
    from it, not from the baseline, whose lines next to it may be other kept hunks' old text."""
    out: dict[int, tuple[int, Context, Context]] = {}
    by_uri: dict[str, list[int]] = {}
    for i, (p, stay) in enumerate(zip(planned, stays)):
        if stay and p.kind == Kind.EDIT:
            by_uri.setdefault(p.uri, []).append(i)
    for uri, idx in by_uri.items():
        base = bases.get(uri)
        if base is None:
            continue
        idx.sort(key=lambda i: edit_order((planned[i].spec.start, planned[i].spec.old, planned[i].spec.new)))
        edits = [(planned[i].spec.start, planned[i].spec.old, planned[i].spec.new) for i in idx]
        try:
            lines = apply_edits(split_lines(base), edits)
        except TextMismatch:
            continue
        shifts = Shifts(edits)
        for k, i in enumerate(idx):
            spec = planned[i].spec
            at = shifts.landed(k)
            out[i] = (at, *context_around(lines, at, at + len(spec.new)))
    return out
