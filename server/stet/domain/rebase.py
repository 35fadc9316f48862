"""Carrying an agent's change onto the file as it is now.

A resumed agent often re-sends a change written against the file as it was when its
task began: some of its hunks have been applied since, so the change no longer fits the
file. `rebase` takes this task's applied hunks back out, makes the change against that
older text, drops what is already in, and places the rest in the current text. The
review then sees only what is genuinely new (and flags what was rejected before).

Also here: edits given as exact text to replace (the form LLM agents write best), and
turning a new text into whole-line LSP edits. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .anchor import LineIndex, locate
from .hunks import TextMismatch, apply_edits, diff_hunks
from .model import Hunk
from .shapes import TextEdit
from .text import detect_eol, normalize_eol, split_lines, text_range


class ChangeDoesNotFit(ValueError):
    """The change cannot be made against the file (the message says where and why)."""


def line_edits(base: str, result: str) -> list[TextEdit]:
    """LSP text edits of whole lines that turn `base` into `result`, one per changed run."""
    lines = split_lines(base)
    edits = []
    for spec in diff_hunks(base, result):
        (sl, sc), (el, ec) = text_range(lines, spec.start, len(spec.old))
        rng = {"start": {"line": sl, "character": sc}, "end": {"line": el, "character": ec}}
        edits.append((rng, spec.new_text))
    return edits


def replace_text(text: str, edits: Sequence[tuple[str, str]], path: str) -> str:
    """Apply (old text, new text) replacements in order; each old text must occur exactly once.

    Line breaks of the agent's text are written as the file's own.
    """
    eol = detect_eol(text)
    for i, (old, new) in enumerate(edits, start=1):
        old, new = normalize_eol(old, eol), normalize_eol(new, eol)
        if not old:
            raise ChangeDoesNotFit(f"{path}: edit {i} has an empty oldText; give the exact text to replace")
        count = text.count(old)
        if count == 0:
            raise ChangeDoesNotFit(
                f"{path}: edit {i}: oldText was not found in the file (it may have changed since you read it: "
                f"read it again and copy the text exactly, whitespace included)"
            )
        if count > 1:
            raise ChangeDoesNotFit(
                f"{path}: edit {i}: oldText occurs {count} times; include more surrounding lines so it is unique"
            )
        text = text.replace(old, new, 1)
    return text


def rebase(current: str, applied: Sequence[Hunk], make: Callable[[str], str]) -> tuple[str, list[Hunk]]:
    """The new text of a file, and the applied hunks the change repeated.

    `make(current)` when it fits; else the change made against the file without `applied`
    (this task's hunks applied since), minus those hunks, carried onto `current`. Raises
    ChangeDoesNotFit when neither fits."""
    try:
        return make(current), []
    except ChangeDoesNotFit as exc:
        if not applied:
            raise
        first = exc
    lines = split_lines(current)
    index = LineIndex(lines)
    placed: list[tuple[int, Hunk]] = []
    for h in applied:
        found = locate(index, h.replacement, h.line, h.ctx_before, h.ctx_after, trust_hint=False)
        if found is not None:
            placed.append((found.line, h))
    placed.sort(key=lambda p: p[0])
    try:
        base_lines = apply_edits(lines, [(line, h.replacement, h.old) for line, h in placed])
    except TextMismatch:
        raise first from None
    # Where each taken-out hunk sits in the older text.
    spots: list[tuple[int, Hunk]] = []
    shift = 0
    for line, h in placed:
        spots.append((line + shift, h))
        shift += len(h.old) - len(h.replacement)
    base = "".join(base_lines)
    # When the change fits neither, this attempt's error is the telling one: it already
    # accounts for what this task changed.
    older_result = make(base)
    edits = []
    repeated: list[Hunk] = []
    for spec in diff_hunks(base, older_result):
        same = [h for b, h in spots if b == spec.start and spec.old == h.old and spec.new in (h.new, h.replacement)]
        if same:
            repeated.append(same[0])  # applied already
            continue
        for b, h in spots:
            if _overlap(spec.start, len(spec.old), b, len(h.old)):
                raise ChangeDoesNotFit(
                    f"the change at line {spec.start + 1} overlaps hunk {h.id}, which is applied already "
                    f"with different text; read the file again and write the change against it"
                )
        start = spec.start
        for b, h in spots:
            if b + len(h.old) <= spec.start:
                start += len(h.replacement) - len(h.old)
        edits.append((start, spec.old, spec.new))
    try:
        return "".join(apply_edits(lines, edits)), repeated
    except TextMismatch as exc:
        raise ChangeDoesNotFit(str(exc)) from None


def _overlap(a: int, alen: int, b: int, blen: int) -> bool:
    if alen == 0:
        return b < a < b + blen
    if blen == 0:
        return a < b < a + alen
    return a < b + blen and b < a + alen
