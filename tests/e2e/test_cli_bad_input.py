"""Bad input through the real CLI: exit 2, a message naming file and line, nothing written."""

from __future__ import annotations

import os
import subprocess

import pytest

from support.clitools import STET, commit_all, db_summary, git, make_repo, snapshot, stet, stet_json


@pytest.fixture
def repo(tmp_path):
    root = make_repo(tmp_path / "repo")
    (root / "a.txt").write_bytes(b"one\ntwo\nthree\n")
    (root / "b.txt").write_bytes(b"alpha\nbeta\n")
    (root / "img.bin").write_bytes(bytes(range(256)))
    commit_all(root)
    # A store with one proposal already, so "nothing written" is checked against a live store.
    uri = (root / "b.txt").resolve().as_uri()
    edit = (
        '{"changes": {"%s": [{"range": {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 0}}, "newText": "ALPHA\\n"}]}}'
        % uri
    )
    stet_json("propose", "--edit", "-", "--id", "seed", cwd=root, input=edit)
    return root


def refused(root, patch: str | bytes, *needles: str, code: int = 2):
    before_files, before_db = snapshot(root), db_summary(root / ".stet" / "stet.db")
    p = stet("propose", "--patch", "-", cwd=root, input=patch)
    assert p.returncode == code, (p.returncode, p.stdout, p.stderr)
    for needle in needles:
        assert needle in p.stderr, (needle, p.stderr)
    assert snapshot(root) == before_files, "no file may change"
    assert db_summary(root / ".stet" / "stet.db") == before_db, "the store may not change"
    return p


def test_malformed_patch(repo):
    refused(repo, "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n", "a.txt", "patch line", "ends early")
    refused(repo, "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+ONE\n+extra\n", "patch line 6")
    refused(repo, "this is no diff at all\n", "not a unified diff")


def test_patch_that_does_not_match_the_file(repo):
    (repo / "a.txt").write_bytes(b"one\nTWO\nthree\n")
    diff = git("diff", cwd=repo)
    git("checkout", "-q", "--", "a.txt", cwd=repo)
    (repo / "a.txt").write_bytes(b"one\n2\nthree\n")  # the file moved on since the agent's diff
    refused(repo, diff, "a.txt: line 2 does not match", "patch line")


def test_a_mismatch_in_the_second_file_refuses_the_whole_patch(repo):
    (repo / "a.txt").write_bytes(b"one\nTWO\nthree\n")
    (repo / "b.txt").write_bytes(b"alpha\nBETA\n")
    diff = git("diff", cwd=repo)
    git("checkout", "-q", "--", ".", cwd=repo)
    (repo / "b.txt").write_bytes(b"alpha\nbeta, changed\n")
    refused(repo, diff, "b.txt: line 2")


@pytest.mark.parametrize(
    "path, needle",
    [
        ("../outside.txt", "climbs out"),
        ("/etc/passwd", "absolute path"),
        (".git/config", "inside .git/"),
        (".stet/stet.db", "inside .stet/"),
    ],
)
def test_paths_outside_the_workspace(repo, path, needle):
    # As git writes them: a/PATH and b/PATH (a//etc/passwd strips to /etc/passwd).
    diff = f"--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n-x\n+y\n"
    refused(repo, diff, needle, path)


def test_symlink_out_of_the_workspace(repo, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_bytes(b"x\n")
    os.symlink(outside, repo / "link")
    diff = "--- a/link/secret.txt\n+++ b/link/secret.txt\n@@ -1 +1 @@\n-x\n+y\n"
    refused(repo, diff, "OutsideWorkspace", "link/secret.txt")
    assert (outside / "secret.txt").read_bytes() == b"x\n"


def test_binary_patch(repo):
    (repo / "img.bin").write_bytes(bytes(reversed(range(256))))
    diff = git("diff", "--binary", cwd=repo)
    git("checkout", "-q", "--", ".", cwd=repo)
    assert "GIT binary patch" in diff
    refused(repo, diff, "img.bin", "binary")
    plain = (
        git("diff", cwd=repo)
        or "diff --git a/img.bin b/img.bin\nindex 1..2 100644\nBinary files a/img.bin and b/img.bin differ\n"
    )
    refused(repo, plain, "binary")


def test_binary_input_bytes(repo):
    refused(repo, b"\xff\xfe\x00garbage", "not UTF-8")


def test_patch_for_a_missing_file(repo):
    refused(repo, "--- a/nope.txt\n+++ b/nope.txt\n@@ -1 +1 @@\n-x\n+y\n", "nope.txt", "does not exist")


def test_endless_input_is_refused_at_a_bound(repo):
    # /dev/zero as the patch file: not a regular file, never read; as stdin (or an endless pipe),
    # read up to a bound, then TooLarge. Nothing stored either way.
    before_files, before_db = snapshot(repo), db_summary(repo / ".stet" / "stet.db")
    p = stet("propose", "--patch", "/dev/zero", cwd=repo, timeout=30)
    assert p.returncode == 2 and "cannot read /dev/zero: a device, not a regular file" in p.stderr, p.stderr
    with open("/dev/zero", "rb") as zero:
        p = subprocess.run(
            [*STET, "propose", "--patch", "/dev/stdin"],
            cwd=repo,
            stdin=zero,
            capture_output=True,
            text=True,
            timeout=30,
        )
    assert p.returncode == 2 and "TooLarge: /dev/stdin is larger than 40 MiB" in p.stderr, p.stderr
    assert snapshot(repo) == before_files and db_summary(repo / ".stet" / "stet.db") == before_db
    refused(repo, b"x" * (40 * 2**20 + 1), "TooLarge: stdin is larger than 40 MiB")
