"""A commit keeps: whether a kept hunk's new text (the agent's text left in the file for review)
is in a commit's version of its file, at its place. Pure: the caller reads the commits.

Only a kept hunk waiting for review is ever decided by a commit; the developer's edit of the
agent's text before committing (the commit holds other text there) is not the agent's text kept.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .anchor import LineIndex, find_applied, locate
from .model import Hunk, Kind
from .text import split_lines

# The op id of the accept a commit makes of a hunk: the same in every process that notices it,
# so two of them (or one after a kill) log it once.
OP_PREFIX = "commit-keep:"


def op_id(hunk_id: str, commit: str) -> str:
    return f"{OP_PREFIX}{commit}:{hunk_id}"


def eligible(h: Hunk) -> bool:
    """A hunk a commit may decide: kept, and waiting for review."""
    return h.kept_pending


def kept_in(h: Hunk, text: str | None, new_text: str | None = None, index: LineIndex | None = None) -> bool:
    """Is `h`'s new text in `text` (its file as a commit holds it; None: not in the commit), at
    its place? For a rename, `new_text` is the commit's text at the new path and `text` the
    old path's (None: gone, as the rename leaves it). `index`: `text`'s lines indexed, when the
    caller asks this of many hunks of one file (built once, not once per hunk)."""
    if not eligible(h):
        return False
    if h.kind == Kind.CREATE:
        return text is not None and text == h.new_text
    if h.kind == Kind.DELETE:
        return text is None
    if h.kind == Kind.RENAME:
        return text is None and new_text is not None and (not h.new or new_text == h.new_text)
    if text is None:
        return False
    return at_place(index or LineIndex(split_lines(text)), h.new, h.old, h.line, h.ctx_before, h.ctx_after)


def at_place(
    index: LineIndex,
    new: Sequence[str],
    old: Sequence[str],
    line: int,
    before: Sequence[str | None],
    after: Sequence[str | None],
) -> bool:
    """The anchoring rule of an applied hunk (anchor.find_applied), on the commit's lines; and
    the commit does not also hold, there, what the file held before the agent's edit: where
    lines repeat, an inserted line can show at its place in the baseline itself (a commit
    made before the agent worked), and a commit that may be the baseline keeps nothing."""
    ctx = (tuple(before), tuple(after))
    if find_applied(index, new, old, line, *ctx) is None:
        return False
    return not new or locate(index, old, line, *ctx, trust_hint=False) is None


def first_keeping(kept: Sequence[bool] | Iterable[bool]) -> int | None:
    """Of the commits that touched a file, newest first, whether each holds the hunk's text: the
    index of the commit that put it there (the oldest of the newest run that holds it), None
    when HEAD's own version does not hold it. Read lazily: no commit past the run is asked."""
    n = None
    for i, held in enumerate(kept):
        if not held:
            break
        n = i
    return n
