"""The unified-diff parser and writer (pure), checked against real `git diff` output."""

from __future__ import annotations

import subprocess

import pytest
from hypothesis import given, settings, strategies as st

from clitools import commit_all, git, make_repo
from stet import patches
from stet.patches import PatchError, PatchMismatch, apply_file, format_file, parse


def test_git_diff_of_every_kind_of_change(tmp_path):
    repo = make_repo(tmp_path / "r")
    files = {
        "mod.txt": b"a\nb\nc\nd\ne\nf\ng\nh\n",
        "crlf.txt": b"one\r\ntwo\r\nthree\r\n",
        "nonl.txt": b"x\ny",
        "gone.txt": b"bye\nnow\n",
        "old name.txt": b"r1\nr2\nr3\nr4\nr5\n",
        "\u00e9t\u00e9.txt": b"summer\n",
    }
    for name, data in files.items():
        (repo / name).write_bytes(data)
    commit_all(repo)
    (repo / "mod.txt").write_bytes(b"a\nB\nc\nd\ne\nf\nG\nh\nadded\n")
    (repo / "crlf.txt").write_bytes(b"one\r\nTWO\r\nthree\r\n")
    (repo / "nonl.txt").write_bytes(b"x\nY")
    (repo / "gone.txt").unlink()
    git("mv", "old name.txt", "new name.txt", cwd=repo)
    (repo / "new name.txt").write_bytes(b"r1\nr2\nr3\nr4\nR5\n")
    (repo / "\u00e9t\u00e9.txt").write_bytes(b"SUMMER\n")
    (repo / "fresh.txt").write_bytes(b"hello\nworld")
    git("add", "-A", cwd=repo)
    text = git("diff", "--cached", "-M", cwd=repo)
    by_path = {f.path: f for f in parse(text)}
    assert {p: f.op for p, f in by_path.items()} == {
        "mod.txt": "modify",
        "crlf.txt": "modify",
        "nonl.txt": "modify",
        "gone.txt": "delete",
        "new name.txt": "rename",
        "\u00e9t\u00e9.txt": "modify",
        "fresh.txt": "create",
    }
    assert by_path["new name.txt"].old_path == "old name.txt"
    # Applying each file's patch to the old bytes gives exactly the new bytes.
    new_files = {
        "mod.txt": b"a\nB\nc\nd\ne\nf\nG\nh\nadded\n",
        "crlf.txt": b"one\r\nTWO\r\nthree\r\n",
        "nonl.txt": b"x\nY",
        "new name.txt": b"r1\nr2\nr3\nr4\nR5\n",
        "\u00e9t\u00e9.txt": b"SUMMER\n",
        "fresh.txt": b"hello\nworld",
    }
    for path, f in by_path.items():
        old = None if f.op == "create" else files[f.old_path].decode()
        result = apply_file(f, old)
        assert result == (None if f.op == "delete" else new_files[path].decode()), path


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


@settings(max_examples=40, deadline=None)
@given(lines, lines)
def test_git_apply_takes_what_format_writes(tmp_path_factory, a, b):
    old, new = _text(a), _text(b)
    if old == new:
        return
    repo = make_repo(tmp_path_factory.mktemp("g"))
    (repo / "f.txt").write_bytes(old.encode())
    diff = format_file("f.txt", "f.txt", old, new)
    p = subprocess.run(["git", "apply", "-"], cwd=repo, input=diff.encode(), capture_output=True)
    assert p.returncode == 0, (diff, p.stderr)
    assert (repo / "f.txt").read_bytes() == new.encode()


def test_quoted_names_round_trip():
    diff = format_file('we "ird"\u00e9.txt', 'we "ird"\u00e9.txt', "a\n", "b\n")
    (f,) = parse(diff)
    assert f.path == 'we "ird"\u00e9.txt'
