"""Where a journaled edit stands in a text: already done, still to do, or no longer possible.

This is how effects are made idempotent: the content is checked before anything is
written, so running an effect twice (after a crash) never applies it twice.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from .anchor import LineIndex, at_with_context, insertion_by_one_side, locate, text_at
from .hunks import Context, Lines

# already done, still to do, or no longer possible
Outcome = Literal["done", "apply", "stale"]


@dataclass(frozen=True)
class Verdict:
    outcome: Outcome
    line: int


def classify(
    lines: Sequence[str],
    source: Lines,
    target: Lines,
    hint: int,
    before: Context,
    after: Context,
    index: LineIndex | None = None,
    *,
    tracked: bool = False,
    from_lost_buffer: bool = False,
) -> Verdict:
    """Is `target` already where `source` was, is `source` still there, or neither?

    With a `tracked` hint (followed through every edit of an open buffer) the text at the
    hint decides first: lines typed right next to it cannot make it look lost.
    `from_lost_buffer`: an edit made in an editor's buffer that was lost unsaved, now made on
    the file; its line and context were the buffer's, whose typed lines never reached the
    file, so its text found once in the file near that line is taken as it."""
    if tracked:
        if target and text_at(lines, target, hint):
            return Verdict("done", hint)
        if not source and target and text_at(lines, target, hint - len(target)):
            # A pure insertion: its anchor is an empty text, which moves below lines inserted
            # at its place - the insertion's own lines included, once the editor reports them.
            return Verdict("done", hint - len(target))
        if source and text_at(lines, source, hint) or not source and target:
            return Verdict("apply", hint)
    if at_with_context(lines, target, hint, before, after):
        return Verdict("done", hint)
    if source and text_at(lines, source, hint) or not source and at_with_context(lines, source, hint, before, after):
        return Verdict("apply", hint)
    index = index or LineIndex(lines)
    found = locate(index, target, hint, before, after, trust_hint=False)
    if found:
        return Verdict("done", found.line)
    found = locate(index, source, hint, before, after, trust_hint=False)
    if found:
        return Verdict("apply", found.line)
    if from_lost_buffer:
        found = locate(index, target, hint, before, after, one_side=False)
        if found:
            return Verdict("done", found.line)
        if source:
            found = locate(index, source, hint, before, after, one_side=False)
        else:
            found = insertion_by_one_side(index, hint, before, after)
        if found:
            return Verdict("apply", found.line)
    return Verdict("stale", hint)
