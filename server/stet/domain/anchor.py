"""Anchoring: keep each hunk attached to its text.

Two mechanisms, both deterministic:
- `shift`: while a document is open, every edit moves the anchors below it; an edit that
  touches an anchored text marks it for verification (the caller checks the text).
- `locate`: after a restart or an outside change, find the text again: at its recorded
  line (with its nearest context line on each side; a pure insertion, which has no text to
  check, only while no other place has more of its context), else the nearest exact match
  with its full context, else a bounded fuzzy match (outer context lines ignored, like
  `patch --fuzz`, but never the nearest one on either side), else a match with all of its
  context on one side, else at its recorded line even though its surroundings changed, else
  its only occurrence in the document if that is near its recorded line, else nothing. When
  several places fit equally well, nothing is returned: the context decides, never a guess.

A hunk's context is the text around it as Stet last saw it: when Stet writes lines next to a
hunk, the hunk's context is taken again from the text (`neighbours`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from .hunks import EDGE, Context

MAX_FUZZ = 2
NEAR = 20  # lines: how far from its recorded line a text found only once may be taken without context


@dataclass(frozen=True)
class LineEdit:
    """One text change in line terms: what an anchor needs to know of it."""

    start_line: int
    start_col0: bool  # the change starts at column 0
    end_line: int
    end_col0: bool  # the change ends at column 0
    breaks: int  # line breaks in the inserted text
    ends_with_break: bool
    empty: bool  # nothing inserted

    @property
    def delta(self) -> int:
        return self.breaks - (self.end_line - self.start_line)


def shift(line: int, length: int, edit: LineEdit) -> tuple[int, bool]:
    """Where an anchored run of `length` whole lines at `line` is after `edit`, and whether
    the edit touched it (then the caller must verify the text is still there)."""
    end = line + length
    ends_above = edit.end_line < line or (edit.end_line == line and edit.end_col0)
    if ends_above:
        # The anchor's first line stays whole unless the edit glued text in front of it.
        whole = edit.end_line < line or edit.ends_with_break or (edit.empty and edit.start_col0)
        return line + edit.delta, not whole
    if edit.start_line >= end:
        # Below the text (for an insertion point: on or after the line it goes before).
        return line, False
    if edit.start_line < line:
        return max(edit.start_line, line + edit.delta), True
    return line, True


class Anchored(Protocol):
    line: int

    def anchored_length(self) -> int: ...


class Anchors:
    """The anchored items of one open document, moved in place by each edit."""

    def __init__(self) -> None:
        self.items: dict[str, Anchored] = {}

    def put(self, key: str, item: Anchored) -> None:
        self.items[key] = item

    def drop(self, key: str) -> None:
        self.items.pop(key, None)

    def __contains__(self, key: str) -> bool:
        return key in self.items

    def __len__(self) -> int:
        return len(self.items)

    def apply(self, edit: LineEdit) -> set[str]:
        """Move every item for `edit`; return the keys whose text the edit touched."""
        touched = set()
        start, end, delta = edit.start_line, edit.end_line, edit.delta
        for key, item in self.items.items():
            line = item.line
            # The two common cases, inlined: what `shift` gives for them, without the call.
            if line > end:  # wholly below the edit: moves by the lines it added or removed
                if delta:
                    item.line = line + delta
                continue
            if line < start and line + item.anchored_length() <= start:  # wholly above
                continue
            line, hit = shift(line, item.anchored_length(), edit)
            item.line = line
            if hit:
                touched.add(key)
        return touched


class LineIndex:
    """Positions of each distinct line of a text, built once and shared by many look-ups."""

    def __init__(self, lines: Sequence[str]):
        self.lines = lines
        self._pos: dict[str, list[int]] | None = None

    def positions(self, line: str) -> list[int]:
        if self._pos is None:
            pos: dict[str, list[int]] = {}
            for i, text in enumerate(self.lines):
                pos.setdefault(text, []).append(i)
            self._pos = pos
        return self._pos.get(line, [])


def context_scores(lines: Sequence[str], start: int, end: int, before: Context, after: Context) -> tuple[int, int]:
    """How many context lines match, counting outward from the text on each side."""
    sb = 0
    for k, want in enumerate(reversed(before)):
        i = start - 1 - k
        have = lines[i] if i >= 0 else (EDGE if i == -1 else object())
        if have != want:
            break
        sb += 1
    sa = 0
    for k, want in enumerate(after):
        i = end + k
        have = lines[i] if i < len(lines) else (EDGE if i == len(lines) else object())
        if have != want:
            break
        sa += 1
    return sb, sa


def text_at(lines: Sequence[str], text: Sequence[str], line: int) -> bool:
    n = len(text)
    return 0 <= line <= len(lines) - n and all(lines[line + i] == text[i] for i in range(n))


def at_with_context(lines: Sequence[str], text: Sequence[str], line: int, before: Context, after: Context) -> bool:
    """The text is at `line` with at least its nearest context line on each side."""
    if not text_at(lines, text, line):
        return False
    sb, sa = context_scores(lines, line, line + len(text), before, after)
    return sb >= min(1, len(before)) and sa >= min(1, len(after))


@dataclass(frozen=True)
class Found:
    line: int
    how: str  # "recorded" | "exact" | "fuzz1" | "fuzz2" | "one-side"


def _candidates(index: LineIndex, text: Sequence[str], before: Context, after: Context) -> list[int]:
    lines = index.lines
    if text:
        return [p for p in index.positions(text[0]) if text_at(lines, text, p)]
    # A pure insertion has no text of its own: candidates come from its nearest context.
    if before and before[-1] is not EDGE:
        return [p + 1 for p in index.positions(before[-1])]
    if before:
        return [0]
    if after and after[0] is not EDGE:
        return list(index.positions(after[0]))
    return [len(lines)]


def locate(
    index: LineIndex,
    text: Sequence[str],
    hint: int,
    before: Context,
    after: Context,
    *,
    trust_hint: bool = True,
    max_fuzz: int = MAX_FUZZ,
    one_side: bool = True,
) -> Found | None:
    lines = index.lines
    recorded = trust_hint and at_with_context(lines, text, hint, before, after)
    if recorded and text:
        return Found(hint, "recorded")
    scored = []
    for p in _candidates(index, text, before, after):
        sb, sa = context_scores(lines, p, p + len(text), before, after)
        scored.append((p, sb, sa))
    if recorded:
        # A pure insertion has no text of its own to check: its recorded line, with its nearest
        # context on each side, is taken unless another place has more of its context around it.
        sb, sa = context_scores(lines, hint, hint, before, after)
        if all(sb + sa >= b + a for _, b, a in scored):
            return Found(hint, "recorded")
    for fuzz in range(0, max_fuzz + 1):
        need_b = max(min(1, len(before)), len(before) - fuzz)
        need_a = max(min(1, len(after)), len(after) - fuzz)
        fits = sorted(((-(sb + sa), abs(p - hint), p) for p, sb, sa in scored if sb >= need_b and sa >= need_a))
        if not fits:
            continue
        if len(fits) > 1 and fits[0][:2] == fits[1][:2]:
            return None  # equally good places: refuse to guess
        return Found(fits[0][2], "exact" if fuzz == 0 else f"fuzz{fuzz}")
    if text and one_side:
        # A line typed right next to the text (and not yet checkpointed) hides its nearest
        # context on that side: all of its context on the other side still identifies it.
        fits = sorted((-(sb + sa), abs(p - hint), p) for p, sb, sa in scored if sb == len(before) or sa == len(after))
        if fits and not (len(fits) > 1 and fits[0][:2] == fits[1][:2]):
            return Found(fits[0][2], "one-side")
    if trust_hint and text and text_at(lines, text, hint):
        # Its surroundings changed, but the text is still where it was recorded.
        return Found(hint, "recorded")
    if trust_hint and text and len(scored) == 1 and abs(scored[0][0] - hint) <= NEAR:
        # Lines typed right next to it on both sides, and its recorded line a little behind (the
        # position was followed in a buffer but not yet checkpointed when the process died): the
        # text occurs once in the whole document, close to where it was. Not a guess between places.
        return Found(scored[0][0], "unique")
    return None


def insertion_by_one_side(index: LineIndex, hint: int, before: Context, after: Context) -> Found | None:
    """A pure insertion's place by all of its context on one side, the nearest lines of the
    other side gone (typed in an editor's buffer that was lost since): one such place, near
    its line. None where there is none or two equally good."""
    lines = index.lines
    places = set(_candidates(index, (), before, after))
    if after and after[0] is not EDGE:
        places.update(index.positions(after[0]))
    fits = []
    for p in places:
        sb, sa = context_scores(lines, p, p, before, after)
        if abs(p - hint) <= NEAR and (before and sb == len(before) or after and sa == len(after)):
            fits.append((-(sb + sa), abs(p - hint), p))
    fits.sort()
    if not fits or len(fits) > 1 and fits[0][:2] == fits[1][:2]:
        return None
    return Found(fits[0][2], "one-side")


def find_applied(
    index: LineIndex,
    new: Sequence[str],
    old: Sequence[str],
    hint: int,
    before: Context,
    after: Context,
    *,
    tracked: bool = False,
) -> Found | None:
    """Where an applied hunk's new text is (None: it is no longer there).

    A position followed through every edit of a buffer (`tracked`) is evidence on its own:
    the text there decides, whatever was typed around it. Otherwise the context decides.
    A deletion (no new text) is in place while its old text has not come back: found between
    its nearest context lines, with as much of its context around it as the place the lines
    were taken from has, and as near to the recorded line (a copy of a deleted line next to
    where it was is not it coming back)."""
    lines = index.lines
    if new:
        if tracked and text_at(lines, new, hint):
            return Found(hint, "tracked")
        return locate(index, new, hint, before, after)
    if tracked:
        return None if text_at(lines, old, hint) else Found(hint, "tracked")
    here = locate(index, new, hint, before, after, trust_hint=False)
    back = locate(index, old, hint, before, after, trust_hint=False, one_side=False) if old else None
    if back is None:
        return here or Found(min(hint, len(lines)), "recorded")
    if here is None:
        return None
    # Both fit: the better context decides, then the nearer to the recorded line (where the
    # lines would be if put back); a tie is taken as them back, as before.
    as_here = (sum(context_scores(lines, here.line, here.line, before, after)), -abs(here.line - hint))
    as_back = (sum(context_scores(lines, back.line, back.line + len(old), before, after)), -abs(back.line - hint))
    return here if as_here > as_back else None
