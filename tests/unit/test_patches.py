"""The unified-diff parser and writer: pure checks (the ones against real git are in
e2e/test_patches_git.py)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stet.domain import patches
from stet.domain.patches import PatchError, PatchMismatch, apply_file, format_file, parse


def test_mismatch_names_file_and_lines():
    text = "--- a/f.txt\n+++ b/f.txt\n@@ -2,2 +2,2 @@\n two\n-three\n+THREE\n"
    (f,) = parse(text)
    with pytest.raises(PatchMismatch) as info:
        apply_file(f, "one\ntwo\ntres\n")
    msg = str(info.value)
    assert "f.txt" in msg and "line 3" in msg and "patch line 5" in msg and "'tres\\n'" in msg


def test_missing_newline_must_match_exactly():
    (f,) = parse("--- a/f\n+++ b/f\n@@ -1 +1 @@\n-x\n\\ No newline at end of file\n+y\n")
    assert apply_file(f, "x") == "y\n"
    with pytest.raises(PatchMismatch):
        apply_file(f, "x\n")  # the patch says the old line had no newline


@pytest.mark.parametrize(
    "text, where",
    [
        ("--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n-a\n+b\n", "ends early"),
        ("--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n+c\n", "unexpected line"),
        ("--- a/f\n+++ b/f\n@@ -x +1 @@\n", "malformed hunk header"),
        ("@@ -1 +1 @@\n-a\n+b\n", "before any ---/+++"),
        ("hello, this is not a diff\n", "no file changes"),
        ('--- "a/unterminated\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n', "unterminated quoted path"),
    ],
)
def test_malformed_patches_name_the_line(text, where):
    with pytest.raises(PatchError) as info:
        parse(text)
    assert where in str(info.value)
    if where != "no file changes":
        assert "patch line" in str(info.value)


@pytest.mark.parametrize("path", ["../x", "a/../../x", "/etc/passwd", ".git/config", ".stet/stet.db", "C:\\x"])
def test_paths_that_leave_the_workspace_are_refused(path):
    with pytest.raises(PatchError):
        patches.check_path(path, 1)


def test_binary_patch_is_marked():
    text = "diff --git a/img.png b/img.png\nindex 1..2 100644\nBinary files a/img.png and b/img.png differ\n"
    (f,) = parse(text)
    assert f.binary
    with pytest.raises(PatchError, match="binary"):
        apply_file(f, "")


lines = st.lists(st.sampled_from(["a\n", "b\n", "c\n", "a\r\n", "\n", "é\n", "x"]), max_size=14)


def _text(parts: list[str]) -> str:
    # Only the last line may lack a terminator.
    return "".join(p if p.endswith("\n") or i == len(parts) - 1 else p + "\n" for i, p in enumerate(parts))


@settings(max_examples=300, deadline=None)
@given(lines, lines)
def test_format_then_parse_then_apply_round_trips(a, b):
    old, new = _text(a), _text(b)
    diff = format_file("d/f.txt", "d/f.txt", old, new)
    if old == new:
        assert diff == ""
        return
    (f,) = parse(diff)
    assert f.path == "d/f.txt"
    assert apply_file(f, old) == new


def test_quoted_names_round_trip():
    diff = format_file('we "ird"\u00e9.txt', 'we "ird"\u00e9.txt', "a\n", "b\n")
    (f,) = parse(diff)
    assert f.path == 'we "ird"\u00e9.txt'


@pytest.mark.parametrize(
    "header, name",
    [
        ('"a/caf\\303\\251 menu.txt"\t', "caf\u00e9 menu.txt"),  # git: quoted, then a TAB (the name has a space)
        ("a/plain name.txt\t", "plain name.txt"),  # git: a TAB after a name with a space
        ("a/plain name.txt\t2026-12-02 10:00:00.000000000 +0000", "plain name.txt"),  # diff -u's timestamp
        ('"a/tab\\tname.txt"', "tab\tname.txt"),
        ('"a/new\\nline.txt"', "new\nline.txt"),
        ('"a/say \\"hi\\".txt"\t', 'say "hi".txt'),
        ('"a/back\\\\slash.txt"', "back\\slash.txt"),
        ("a/caf\u00e9 menu.txt\t", "caf\u00e9 menu.txt"),  # core.quotepath=false
        ("a/no tab at all.txt", "no tab at all.txt"),
    ],
)
def test_names_in_file_headers_as_git_writes_them(header, name):
    (f,) = parse(f"--- {header}\n+++ {header.replace('a/', 'b/', 1)}\n@@ -1 +1 @@\n-x\n+y\n")
    assert (f.old_path, f.new_path, f.op) == (name, name, "modify")


@pytest.mark.parametrize(
    "header, why",
    [
        ('"a/x.txt"junk', "unexpected text"),
        ('"a/\\303.txt"', "not UTF-8"),
        ('"a/bad\\q.txt"', "bad escape"),
    ],
)
def test_bad_quoted_names_are_refused_with_the_line(header, why):
    with pytest.raises(PatchError) as info:
        parse(f"--- {header}\n+++ b/x.txt\n@@ -1 +1 @@\n-x\n+y\n")
    assert why in str(info.value) and "patch line 1" in str(info.value)


_LINES = st.lists(st.sampled_from(["a\n", "b\n", "c\n", "d", "\r\n", "é\n"]), max_size=8).map("".join)


@settings(max_examples=200, deadline=None)
@given(old=st.one_of(st.none(), _LINES), new=_LINES)
def test_a_reversed_patch_takes_the_new_text_back_to_the_old(old, new):
    if old == new:
        return
    (f,) = parse(format_file("f", "f", old, new))
    assert apply_file(f, old) == new
    assert apply_file(patches.reverse(f), new) == old
