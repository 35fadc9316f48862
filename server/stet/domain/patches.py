"""Unified diffs as `git diff` writes them: parse, check against files, write.

Pure: no I/O. A patch is parsed into one `FilePatch` per file (modified, created, deleted,
renamed or copied), each with its hunks; `apply_file` checks every context and removed
line against the file's text and returns the new text, or says exactly which patch line
does not match which file line. Line contents are kept byte for byte with their
terminators (CRLF files, a last line without a newline), because the review compares
exact text. `format_file` writes a diff back (for `stet export`).

Why our own parser: we need the exact bytes of each line (CRLF, `\\ No newline at end
of file`), git's quoted paths and extended headers (new/deleted/renamed/copied, binary),
strict line counts and the patch line of every problem for the error messages.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .shapes import TextEdit
from .text import split_lines

DEV_NULL = "/dev/null"
CONTEXT = 3

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$")
_NO_EOL = "\\ No newline at end of file"


class PatchError(ValueError):
    """The patch itself is malformed or unsupported; `line` is 1-based in the patch."""

    def __init__(self, message: str, line: int | None = None, path: str | None = None):
        where = ", ".join(p for p in (path, f"patch line {line}" if line else None) if p)
        super().__init__(f"{where}: {message}" if where else message)
        self.line, self.path, self.reason = line, path, message


class PatchMismatch(ValueError):
    """The patch does not fit the file as it is."""

    def __init__(self, path: str, patch_line: int, file_line: int, expected: str, found: str | None):
        what = "the file ends there" if found is None else f"the file has {found!r}"
        super().__init__(
            f"{path}: line {file_line} does not match the patch (patch line {patch_line} expects {expected!r}; {what})"
        )
        self.path, self.patch_line, self.file_line = path, patch_line, file_line


@dataclass
class PatchHunk:
    old_start: int
    old_count: int
    new_start: int
    new_count: int
    lines: list[tuple[str, str, int]] = field(default_factory=list)  # (' '|'-'|'+', text with terminator, patch line)
    patch_line: int = 0

    @property
    def old_lines(self) -> list[str]:
        return [t for tag, t, _ in self.lines if tag != "+"]

    @property
    def new_lines(self) -> list[str]:
        return [t for tag, t, _ in self.lines if tag != "-"]

    @property
    def first_old(self) -> int:
        """0-based index of the first old line this hunk covers (insertion point when empty)."""
        return self.old_start if self.old_count == 0 else self.old_start - 1


@dataclass
class FilePatch:
    op: str  # modify | create | delete | rename | copy
    old_path: str | None  # None for a created file
    new_path: str | None  # None for a deleted file
    hunks: list[PatchHunk] = field(default_factory=list)
    binary: bool = False
    patch_line: int = 0
    mode_change: tuple[str, str] | None = None

    @property
    def path(self) -> str:
        return self.new_path or self.old_path or "?"


# --- parsing ---------------------------------------------------------------------------
_ESCAPES = {"n": 10, "t": 9, '"': 34, "\\": 92, "a": 7, "b": 8, "f": 12, "r": 13, "v": 11}


def _quoted(s: str, line: int) -> tuple[str, str]:
    """A C-quoted name at the start of `s` (git's quoting: octal bytes, C escapes) and what
    follows its closing quote: after a name in a ---/+++ line git may write a TAB."""
    out = bytearray()
    i = 1
    while i < len(s):
        ch = s[i]
        if ch == '"':
            try:
                return out.decode("utf-8"), s[i + 1 :]
            except UnicodeDecodeError:
                raise PatchError(f"quoted path {s[: i + 1]} is not UTF-8", line) from None
        if ch != "\\":
            out += ch.encode("utf-8", "surrogatepass")
            i += 1
            continue
        nxt = s[i + 1 : i + 2]
        if nxt in _ESCAPES:
            out.append(_ESCAPES[nxt])
            i += 2
        elif re.match(r"[0-3][0-7]{2}", s[i + 1 : i + 4]):
            out.append(int(s[i + 1 : i + 4], 8))
            i += 4
        else:
            raise PatchError(f"bad escape in quoted path {s}", line)
    raise PatchError(f"unterminated quoted path {s}", line)


def _unquote(s: str, line: int) -> str:
    """A whole path as git writes it: plain, or in double quotes with C escapes."""
    if not s.startswith('"'):
        return s
    name, rest = _quoted(s, line)
    if rest.strip():
        raise PatchError(f"unexpected text {rest!r} after the quoted path {s[: len(s) - len(rest)]}", line)
    return name


def _strip(path: str, strip: int, line: int) -> str:
    if path == DEV_NULL:
        return path
    parts = path.split("/")
    if len(parts) <= strip:
        raise PatchError(f"cannot strip {strip} leading component(s) from {path!r}", line)
    return "/".join(parts[strip:])


def _header_path(rest: str, strip: int, line: int) -> str:
    """The name in a ---/+++ line. As git apply reads it: a quoted name ends at its closing
    quote, a plain one at a TAB (git writes one after a name with a space; diff, before a
    timestamp); what follows either is not part of the name."""
    rest = rest.rstrip("\r")
    if rest.startswith('"'):
        name, after = _quoted(rest, line)
        if after and not after[0].isspace():
            raise PatchError(f"unexpected text {after!r} after the quoted path", line)
        return _strip(name, strip, line)
    return _strip(rest.split("\t", 1)[0], strip, line)


def _git_line_paths(rest: str, strip: int, line: int) -> tuple[str, str] | None:
    """The two paths of `diff --git A B`; None when unquoted names with spaces make it ambiguous."""
    rest = rest.rstrip("\r")
    if rest.startswith('"'):
        m = re.match(r'^("(?:[^"\\]|\\.)*") (.*)$', rest)
        if not m:
            return None
        return _strip(_unquote(m.group(1), line), strip, line), _strip(_unquote(m.group(2), line), strip, line)
    if rest.endswith('"'):
        m = re.match(r'^(\S+) ("(?:[^"\\]|\\.)*")$', rest)
        if not m:
            return None
        return _strip(m.group(1), strip, line), _strip(_unquote(m.group(2), line), strip, line)
    # Unquoted: a/NAME b/NAME with the same NAME is the only case we can split for sure.
    half = len(rest) // 2
    if len(rest) % 2 == 1 and rest[half] == " ":
        a, b = rest[:half], rest[half + 1 :]
        sa, sb = _strip(a, strip, line), _strip(b, strip, line)
        if sa == sb:
            return sa, sb
    parts = rest.split(" ")
    if len(parts) == 2:
        return _strip(parts[0], strip, line), _strip(parts[1], strip, line)
    return None


def parse(text: str, strip: int = 1) -> list[FilePatch]:
    """Every file of a unified diff, in order. Raises PatchError naming the patch line."""
    if isinstance(strip, bool) or not isinstance(strip, int) or strip < 0:
        raise PatchError(f"cannot strip {strip!r} leading path components: give 0 or more")
    nul = text.find("\x00")
    if nul >= 0:  # a NUL is binary content: Stet reviews text, and would store it as if it were
        raise PatchError("the patch holds a NUL byte: binary content is not reviewed", text.count("\n", 0, nul) + 1)
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    # Each entry keeps its "\n" so that file lines carry their terminators.
    raw = [ln + "\n" for ln in lines]
    if text and not text.endswith("\n"):
        raw[-1] = raw[-1][:-1]
    files: list[FilePatch] = []
    i = 0
    n = len(raw)
    current: FilePatch | None = None

    def head(k: int) -> str:
        return raw[k].rstrip("\n").rstrip("\r")

    while i < n:
        h = head(i)
        lineno = i + 1
        if h.startswith("diff --git "):
            paths = _git_line_paths(h[len("diff --git ") :], strip, lineno)
            current = FilePatch("modify", paths[0] if paths else None, paths[1] if paths else None, patch_line=lineno)
            current._git = True  # type: ignore[attr-defined]
            current._from_header = paths is not None  # type: ignore[attr-defined]
            files.append(current)
            i += 1
            continue
        if h.startswith("--- ") and i + 1 < n and head(i + 1).startswith("+++ "):
            old = _header_path(h[4:], strip, lineno)
            new = _header_path(head(i + 1)[4:], strip, lineno + 1)
            if current is None or current.hunks or getattr(current, "_dashes", False):
                current = FilePatch("modify", None, None, patch_line=lineno)
                files.append(current)
            current._dashes = True  # type: ignore[attr-defined]
            if old == DEV_NULL and new == DEV_NULL:
                raise PatchError("both sides are /dev/null", lineno)
            if old == DEV_NULL:
                current.op, current.old_path, current.new_path = "create", None, new
            elif new == DEV_NULL:
                current.op, current.old_path, current.new_path = "delete", old, None
            else:
                if current.op == "modify":
                    current.old_path, current.new_path = old, new
                    if old != new:
                        current.op = "rename"
            i += 2
            continue
        if h.startswith("@@"):
            if current is None or not getattr(current, "_dashes", False):
                raise PatchError("a hunk before any ---/+++ file header", lineno)
            hunk, i = _parse_hunk(raw, i, current)
            current.hunks.append(hunk)
            continue
        if current is not None and getattr(current, "_git", False) and not getattr(current, "_dashes", False):
            _extended_header(current, h, strip, lineno)
        elif current is not None and h.startswith(("Binary files ", "GIT binary patch")):
            current.binary = True
        elif current is not None and current.hunks and h[:1] in ("+", "-", " ") and h.strip():
            # A diff line right after a complete hunk: the header's line counts are wrong.
            last = current.hunks[-1]
            raise PatchError(
                f"unexpected line {h!r}: the hunk at patch line {last.patch_line} already has the "
                f"{last.old_count} old and {last.new_count} new lines its header announces",
                lineno,
                current.path,
            )
        # Anything else (commit messages, `index` lines, blank lines between files) is ignored, as git apply does.
        i += 1
    for f in files:
        _check_file(f)
    if not files:
        raise PatchError("no file changes found: not a unified diff")
    return files


def _extended_header(f: FilePatch, h: str, strip: int, lineno: int) -> None:
    def path_of(rest: str) -> str:
        # rename/copy lines name the path without a/ b/ prefix.
        return _unquote(rest.rstrip("\r"), lineno)

    if h.startswith("new file mode "):
        f.op, f.old_path = "create", None
    elif h.startswith("deleted file mode "):
        f.op, f.new_path = "delete", None
    elif h.startswith("rename from "):
        f.op, f.old_path = "rename", path_of(h[len("rename from ") :])
    elif h.startswith("rename to "):
        f.op, f.new_path = "rename", path_of(h[len("rename to ") :])
    elif h.startswith("copy from "):
        f.op, f.old_path = "copy", path_of(h[len("copy from ") :])
    elif h.startswith("copy to "):
        f.op, f.new_path = "copy", path_of(h[len("copy to ") :])
    elif h.startswith("old mode "):
        f.mode_change = (h[len("old mode ") :], f.mode_change[1] if f.mode_change else "")
    elif h.startswith("new mode "):
        f.mode_change = (f.mode_change[0] if f.mode_change else "", h[len("new mode ") :])
    elif h.startswith(("Binary files ", "GIT binary patch")):
        f.binary = True


def _parse_hunk(raw: list[str], i: int, f: FilePatch) -> tuple[PatchHunk, int]:
    h = raw[i].rstrip("\n").rstrip("\r")
    m = _HUNK.match(h)
    if not m:
        raise PatchError(f"malformed hunk header {h!r}", i + 1, f.path)
    old_start, new_start = int(m.group(1)), int(m.group(3))
    old_count = int(m.group(2)) if m.group(2) is not None else 1
    new_count = int(m.group(4)) if m.group(4) is not None else 1
    if (old_count and not old_start) or (new_count and not new_start):
        raise PatchError(f"hunk header {h!r} starts at line 0 but has lines", i + 1, f.path)
    hunk = PatchHunk(old_start, old_count, new_start, new_count, patch_line=i + 1)
    olds = news = 0
    i += 1
    while olds < old_count or news < new_count:
        if i >= len(raw):
            raise PatchError(
                f"the hunk at patch line {hunk.patch_line} ends early: "
                f"expected {old_count} old and {new_count} new lines, found {olds} and {news}",
                i,
                f.path,
            )
        line = raw[i]
        tag = line[:1]
        body = line[1:]
        if line in ("\n", "\r\n"):  # a context line whose trailing space was stripped
            tag, body = " ", line
        if tag == "\\":
            _no_eol(hunk, i)
            i += 1
            continue
        if tag not in (" ", "-", "+"):
            raise PatchError(
                f"unexpected line {line.rstrip()!r} inside the hunk at patch line {hunk.patch_line} "
                f"(expected {old_count - olds} more old and {new_count - news} more new lines)",
                i + 1,
                f.path,
            )
        if tag in (" ", "-"):
            olds += 1
        if tag in (" ", "+"):
            news += 1
        if olds > old_count or news > new_count:
            raise PatchError(
                f"the hunk at patch line {hunk.patch_line} has more lines than its header says", i + 1, f.path
            )
        hunk.lines.append((tag, body, i + 1))
        i += 1
    if i < len(raw) and raw[i].startswith("\\"):
        _no_eol(hunk, i)
        i += 1
    return hunk, i


def _no_eol(hunk: PatchHunk, i: int) -> None:
    if not hunk.lines:
        raise PatchError("`\\ No newline at end of file` before any line", i + 1)
    tag, body, at = hunk.lines[-1]
    if body.endswith("\n"):
        body = body[:-1]
    hunk.lines[-1] = (tag, body, at)


def _check_file(f: FilePatch) -> None:
    if f.old_path is None and f.new_path is None:
        raise PatchError("a file header without a file name", f.patch_line)
    if f.op == "modify" and f.old_path != f.new_path:
        f.op = "rename"
    if f.op in ("rename", "copy") and (f.old_path is None or f.new_path is None):
        raise PatchError(f"{f.op} without both names", f.patch_line)
    last_end = 0
    for h in f.hunks:
        if h.first_old < last_end:
            raise PatchError("hunks overlap or are out of order", h.patch_line, f.path)
        last_end = h.first_old + h.old_count
    if f.op == "create" and any(h.old_count for h in f.hunks):
        raise PatchError("a new file's hunk removes lines", f.hunks[0].patch_line, f.path)
    if f.op == "delete" and any(h.new_count for h in f.hunks):
        raise PatchError("a deleted file's hunk adds lines", f.hunks[0].patch_line, f.path)
    for attr in ("_git", "_dashes", "_from_header"):
        f.__dict__.pop(attr, None)


def check_path(path: str, where: int) -> None:
    """Refuse paths that leave the workspace or touch what Stet and git keep for themselves."""
    if not path or "\x00" in path:
        raise PatchError("an empty or NUL path", where)
    if path.startswith("/") or re.match(r"^[A-Za-z]:[\\/]", path):
        raise PatchError(f"absolute path {path!r}: patches name files relative to the workspace", where, path)
    parts = path.replace("\\", "/").split("/")
    if ".." in parts:
        raise PatchError(f"path {path!r} climbs out with '..'", where, path)
    if parts[0] in (".git", ".stet"):
        raise PatchError(f"path {path!r} is inside {parts[0]}/, which Stet never edits", where, path)


# --- applying --------------------------------------------------------------------------
def apply_file(f: FilePatch, base: str | None) -> str | None:
    """The file's text after the patch (None: deleted). `base` is the text now (None: missing).

    Every context and removed line must match exactly where the hunk header says.
    """
    if f.binary:
        raise PatchError("binary patches are not supported: Stet reviews text", f.patch_line, f.path)
    if f.op == "create":
        if base is not None:
            raise PatchError("the patch creates this file, but it already exists", f.patch_line, f.path)
        base = ""
    elif base is None:
        raise PatchError("the patch changes this file, but it does not exist", f.patch_line, f.old_path)
    lines = split_lines(base)
    out: list[str] = []
    pos = 0
    for h in f.hunks:
        start = h.first_old
        if start > len(lines):
            raise PatchMismatch(f.old_path or f.path, h.patch_line, start + 1, "".join(h.old_lines[:1]), None)
        out.extend(lines[pos:start])
        k = start
        for tag, body, at in h.lines:
            if tag == "+":
                out.append(body)
                continue
            have = lines[k] if k < len(lines) else None
            if have != body:
                raise PatchMismatch(f.old_path or f.path, at, k + 1, body, have)
            if tag == " ":
                out.append(body)
            k += 1
        pos = k
    out.extend(lines[pos:])
    result = "".join(out)
    if f.op == "delete":
        if result:
            raise PatchError(
                f"the patch deletes this file but leaves {len(split_lines(result))} line(s) of it unmatched",
                f.patch_line,
                f.path,
            )
        return None
    return result


def reverse(f: FilePatch) -> FilePatch:
    """The patch that undoes `f`: its sides swapped (a created file deleted, and the reverse),
    each added line removed and each removed line added back."""
    flip = {"+": "-", "-": "+"}
    hunks = [
        PatchHunk(
            h.new_start,
            h.new_count,
            h.old_start,
            h.old_count,
            [(flip.get(tag, tag), body, at) for tag, body, at in h.lines],
            h.patch_line,
        )
        for h in f.hunks
    ]
    op = {"create": "delete", "delete": "create"}.get(f.op, f.op)
    return FilePatch(op, f.new_path, f.old_path, hunks, f.binary, f.patch_line)


def hunk_edits(f: FilePatch) -> list[TextEdit]:
    """The patch's hunks as LSP text edits (range of whole old lines, new text), from the headers."""
    edits = []
    for h in f.hunks:
        start = h.first_old
        rng = {"start": {"line": start, "character": 0}, "end": {"line": start + h.old_count, "character": 0}}
        edits.append((rng, "".join(h.new_lines)))
    return edits


# --- writing ---------------------------------------------------------------------------
def _quote(path: str) -> str:
    if all(0x20 <= ord(c) < 0x7F and c not in '"\\' for c in path):
        return path
    out = []
    for byte in path.encode("utf-8"):
        ch = chr(byte)
        if ch in '"\\':
            out.append("\\" + ch)
        elif 0x20 <= byte < 0x7F:
            out.append(ch)
        else:
            out.append(f"\\{byte:03o}")
    return '"' + "".join(out) + '"'


def _side(prefix: str, path: str) -> str:
    q = _quote(path)
    return f'"{prefix}{q[1:]}' if q.startswith('"') else f"{prefix}{path}"


def _dashes(prefix: str, path: str | None) -> str:
    if path is None:
        return DEV_NULL
    name = _side(prefix, path)
    return name + "\t" if " " in path and not name.startswith('"') else name


def _body_line(tag: str, line: str) -> list[str]:
    if line.endswith("\n"):
        return [tag + line]
    return [tag + line + "\n", _NO_EOL + "\n"]


def format_file(
    old_path: str | None, new_path: str | None, old: str | None, new: str | None, context: int = CONTEXT
) -> str:
    """A git-style diff of one file: old text (None: created) to new text (None: deleted)."""
    from .hunks import changed_regions

    a = split_lines(old or "")
    b = split_lines(new or "")
    left, right = old_path or new_path, new_path or old_path
    if left is None or right is None:
        raise ValueError("format_file needs at least one path")
    out = [f"diff --git {_side('a/', left)} {_side('b/', right)}\n"]
    if old is None:
        out.append("new file mode 100644\n")
    elif new is None:
        out.append("deleted file mode 100644\n")
    elif old_path != new_path:
        out += [f"rename from {_quote(left)}\n", f"rename to {_quote(right)}\n"]
    regions = changed_regions(a, b)
    if not regions:
        return "".join(out) if (old is None or new is None or old_path != new_path) else ""
    out.append(f"--- {_dashes('a/', None if old is None else left)}\n")
    out.append(f"+++ {_dashes('b/', None if new is None else right)}\n")
    # Group regions whose context would touch, as diff does.
    groups: list[list[tuple[int, int, int, int]]] = []
    for r in regions:
        if groups and r[0] - groups[-1][-1][1] <= 2 * context:
            groups[-1].append(r)
        else:
            groups.append([r])
    for g in groups:
        a0 = max(0, g[0][0] - context)
        a1 = min(len(a), g[-1][1] + context)
        b0 = g[0][2] - (g[0][0] - a0)
        b1 = g[-1][3] + (a1 - g[-1][1])
        body: list[str] = []
        pos = a0
        for i1, i2, j1, j2 in g:
            for k in range(pos, i1):
                body += _body_line(" ", a[k])
            for k in range(i1, i2):
                body += _body_line("-", a[k])
            for k in range(j1, j2):
                body += _body_line("+", b[k])
            pos = i2
        for k in range(pos, a1):
            body += _body_line(" ", a[k])
        out.append(f"@@ -{_range(a0, a1 - a0)} +{_range(b0, b1 - b0)} @@\n")
        out += body
    return "".join(out)


def _range(start: int, count: int) -> str:
    first = start + 1 if count else start
    return f"{first}" if count == 1 else f"{first},{count}"
