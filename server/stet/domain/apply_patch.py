"""Codex CLI's patch format (its `apply_patch` tool), parsed and applied to a file's text.

    *** Begin Patch
    *** Add File: PATH        then its lines, each `+TEXT`
    *** Delete File: PATH
    *** Update File: PATH     optionally `*** Move to: PATH`, then chunks:
    @@ [a line to find first] then lines ` CONTEXT`, `-OLD`, `+NEW`; `*** End of File` ends a chunk at the file's end
    *** End Patch

As Codex reads it: marker lines are taken with their surrounding whitespace trimmed, the first
chunk of an update may leave out its `@@`, an empty line inside a chunk is an empty context line,
and the patch may come wrapped in a shell heredoc (`apply_patch <<'EOF' ... EOF`). Applying a
chunk finds its old lines as Codex does: exactly, then ignoring trailing whitespace, then
ignoring surrounding whitespace. Pure: no I/O."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

BEGIN, END = "*** Begin Patch", "*** End Patch"
ADD, DELETE, UPDATE, MOVE = "*** Add File: ", "*** Delete File: ", "*** Update File: ", "*** Move to: "
EOF_MARK = "*** End of File"
MAX_CHARS = 64 << 20  # characters of a patch parsed, at most (a hook's whole input is bounded the same)
MAX_COMPARISONS = 20_000_000  # line comparisons one apply may make: a patch of many like lines is refused, not slow


class PatchError(ValueError):
    """The text is not a patch Codex would apply, or a chunk does not fit the file: says where."""


@dataclass(frozen=True)
class Chunk:
    """One `@@` chunk of an update: the line to find first (None: none), the lines it expects
    (context and removed) and the lines it leaves (context and added)."""

    anchor: str | None
    old: tuple[str, ...]
    new: tuple[str, ...]
    at_end: bool = False  # `*** End of File`: the old lines end the file


@dataclass(frozen=True)
class FilePatch:
    """One file's part of a patch: `kind` is "add", "delete" or "update"."""

    kind: str
    path: str
    move_to: str | None = None
    content: str = ""  # an added file's whole text
    chunks: tuple[Chunk, ...] = field(default_factory=tuple)


def parse(text: str, limit: int = MAX_CHARS) -> list[FilePatch]:
    """The files a patch touches, in its order; raises PatchError on anything else."""
    if len(text) > limit:
        raise PatchError(f"the patch is longer than {limit:,} characters")
    lines = _unwrapped(text.splitlines())
    if not lines or lines[0].strip() != BEGIN:
        raise PatchError(f"the first line of the patch must be '{BEGIN}'")
    if lines[-1].strip() != END:
        raise PatchError(f"the last line of the patch must be '{END}'")
    body, i, out = lines[1:-1], 0, []
    while i < len(body):
        line = body[i].strip()
        if not line:
            i += 1  # a blank line between files
        elif line.startswith(ADD.rstrip()):
            path = _path(line, ADD, i)
            i += 1
            added = []
            while i < len(body) and body[i].startswith("+"):
                added.append(body[i][1:])
                i += 1
            out.append(FilePatch("add", path, content="".join(a + "\n" for a in added)))
        elif line.startswith(DELETE.rstrip()):
            out.append(FilePatch("delete", _path(line, DELETE, i)))
            i += 1
        elif line.startswith(UPDATE.rstrip()):
            path = _path(line, UPDATE, i)
            i += 1
            move = None
            if i < len(body) and body[i].strip().startswith(MOVE.rstrip()):
                move = _path(body[i].strip(), MOVE, i)
                i += 1
            chunks, i = _chunks(body, i)
            if not chunks and move is None:
                raise PatchError(f"line {i + 2}: the update of {path} changes nothing")
            out.append(FilePatch("update", path, move_to=move, chunks=tuple(chunks)))
        else:
            raise PatchError(f"line {i + 2}: expected a file header ('*** Add File: ', ...), got {body[i][:80]!r}")
    if not out:
        raise PatchError("the patch touches no file")
    return out


def _unwrapped(lines: list[str]) -> list[str]:
    """The patch's lines, out of the heredoc `apply_patch <<'EOF'` ... `EOF` when so wrapped."""
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    while lines and not lines[0].strip():
        lines = lines[1:]
    if len(lines) >= 2 and "<<" in lines[0] and lines[0].strip() != BEGIN:
        marker = lines[0].split("<<", 1)[1].strip().strip("'\"-").strip()
        if marker and lines[-1].strip() == marker:
            return lines[1:-1]
    return lines


def _path(line: str, marker: str, i: int) -> str:
    path = line[len(marker.rstrip()) :].strip()
    if not path:
        raise PatchError(f"line {i + 2}: '{marker.strip()}' names no file")
    return path


def _is_header(line: str) -> bool:
    s = line.strip()
    return s.startswith((ADD.rstrip(), DELETE.rstrip(), UPDATE.rstrip())) or s == END


def _chunks(body: list[str], i: int) -> tuple[list[Chunk], int]:
    chunks: list[Chunk] = []
    while i < len(body) and not _is_header(body[i]):
        line = body[i]
        anchor: str | None = None
        if line.strip() == "@@" or line.startswith("@@ "):
            anchor = line[3:] if line.startswith("@@ ") else None
            i += 1
        elif chunks:
            raise PatchError(f"line {i + 2}: expected '@@' to start the next chunk, got {line[:80]!r}")
        old: list[str] = []
        new: list[str] = []
        at_end = False
        start = i
        while i < len(body) and not _is_header(body[i]):
            line = body[i]
            if line.strip() == EOF_MARK:
                at_end = True
                i += 1
                break
            if line.strip() == "@@" or line.startswith("@@ "):
                break
            if line == "":
                old.append("")
                new.append("")
            elif line[0] == " ":
                old.append(line[1:])
                new.append(line[1:])
            elif line[0] == "-":
                old.append(line[1:])
            elif line[0] == "+":
                new.append(line[1:])
            else:
                raise PatchError(f"line {i + 2}: a chunk's line starts with ' ', '-' or '+', got {line[:80]!r}")
            i += 1
        if i == start or (not old and not new):
            raise PatchError(f"line {i + 2}: an empty chunk")
        chunks.append(Chunk(anchor, tuple(old), tuple(new), at_end))
    return chunks, i


class _Budget:
    def __init__(self, n: int) -> None:
        self.left = n

    def spend(self, n: int) -> None:
        self.left -= n
        if self.left < 0:
            raise PatchError("the patch's chunks take too long to find in the file")


def _seek(lines: list[str], pattern: list[str], start: int, at_end: bool, budget: _Budget) -> int | None:
    """Where `pattern` is in `lines` from `start` (at the end first for an end-of-file chunk):
    exactly, then with trailing whitespace ignored, then surrounding whitespace ignored."""
    if not pattern:
        return start
    if len(pattern) > len(lines):
        return None
    first = len(lines) - len(pattern) if at_end else start
    ways: tuple[Callable[[str], str], ...] = (str, str.rstrip, str.strip)
    starts: list[int] = list(dict.fromkeys([first, *range(start, len(lines) - len(pattern) + 1)]))
    for loose in ways:
        for s in starts:
            if s < start:
                continue
            k = 0
            while k < len(pattern) and loose(lines[s + k]) == loose(pattern[k]):
                k += 1
            budget.spend(k + 1)
            if k == len(pattern):
                return s
    return None


def apply(
    text: str, chunks: tuple[Chunk, ...] | list[Chunk], path: str = "the file", budget: int = MAX_COMPARISONS
) -> str:
    """`text` with an update's chunks made, as Codex makes them (the result ends with a newline);
    raises PatchError when a chunk's lines are not in the file, or finding them would take more
    than `budget` line comparisons."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    at, replacements, spent = 0, [], _Budget(budget)
    for chunk in chunks:
        if chunk.anchor is not None:
            found = _seek(lines, [chunk.anchor], at, False, spent)
            if found is None:
                raise PatchError(f"{path}: cannot find the line {chunk.anchor[:80]!r}")
            at = found + 1
        old, new = list(chunk.old), list(chunk.new)
        if not old:
            where = len(lines) - 1 if lines and lines[-1] == "" else len(lines)
            replacements.append((where, 0, new))
            continue
        found = _seek(lines, old, at, chunk.at_end, spent)
        if found is None and old[-1] == "":
            old, new = old[:-1], new[:-1] if new and new[-1] == "" else new
            found = _seek(lines, old, at, chunk.at_end, spent)
        if found is None:
            raise PatchError(f"{path}: cannot find the lines {chr(10).join(old)[:200]!r}")
        replacements.append((found, len(old), new))
        at = found + len(old)
    for start, length, new in sorted(replacements, key=lambda r: r[0], reverse=True):
        lines[start : start + length] = new
    return "\n".join(lines) + "\n" if lines else ""
