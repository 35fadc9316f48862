"""The unified-diff parser and writer against real git: `git diff` output parses, and
`git apply` takes what the writer writes."""

from __future__ import annotations

import json
import subprocess
from urllib.parse import unquote, urlsplit

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stet.domain.patches import apply_file, format_file, parse
from support.clitools import commit_all, git, make_repo, stet


def _text(parts: list[str]) -> str:
    # Only the last line may lack a terminator.
    return "".join(p if p.endswith("\n") or i == len(parts) - 1 else p + "\n" for i, p in enumerate(parts))


lines = st.lists(st.sampled_from(["a\n", "b\n", "c\n", "a\r\n", "\n", "é\n", "x"]), max_size=14)


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


# Names as git writes them: C-quoted when they hold non-ASCII bytes (core.quotepath, the default),
# a quote, a backslash, a TAB or a newline; a TAB after the name in ---/+++ when it has a space.
ODD_NAMES = [
    "caf\u00e9 menu.txt",
    "plain name.txt",
    "tab\tname.txt",
    "new\nline.txt",
    'say "hi".txt',
    "back\\slash.txt",
    "\u00fcber.txt",
    " lead space.txt",
]


@pytest.mark.parametrize("quotepath", ["true", "false"])
def test_stet_propose_takes_every_name_git_writes(tmp_path, quotepath):
    repo = make_repo(tmp_path / "r")
    for n, name in enumerate(ODD_NAMES):
        (repo / name).write_bytes(f"one\ntwo {n}\n".encode())
    (repo / "old name \u00e9.txt").write_bytes(b"r1\nr2\nr3\nr4\n")
    commit_all(repo)
    for n, name in enumerate(ODD_NAMES):
        (repo / name).write_bytes(f"one\nTWO {n}\n".encode())
    git("mv", "old name \u00e9.txt", "new name \u00e9.txt", cwd=repo)
    (repo / "new name \u00e9.txt").write_bytes(b"r1\nr2\nr3\nR4\n")
    (repo / "fresh \u00e9 one.txt").write_bytes(b"hello\n")
    git("add", "-A", cwd=repo)
    diff = git("-c", f"core.quotepath={quotepath}", "diff", "--cached", "-M", cwd=repo)
    git("reset", "-q", "--hard", cwd=repo)
    assert '"' in diff and "\t\n" in diff  # quoted names and a TAB after a name with a space

    p = stet("propose", "--patch", "-", "--json", cwd=repo, input=diff)
    assert p.returncode == 0, p.stderr
    hunks = json.loads(p.stdout)["hunks"]
    where = {(h["kind"], unquote(urlsplit(h["uri"]).path)) for h in hunks}
    expected = {("edit", str(repo / name)) for name in ODD_NAMES}
    # A pending rename's edit is shown where the file is until the rename is accepted.
    expected |= {("rename", str(repo / "old name \u00e9.txt")), ("edit", str(repo / "old name \u00e9.txt"))}
    expected |= {("create", str(repo / "fresh \u00e9 one.txt"))}
    assert where == expected
    # A name with a control character is shown on one line, quoted as git shows it.
    table = stet("status", cwd=repo).stdout
    assert '"new\\nline.txt"  (1 pending)' in table and '"tab\\tname.txt"' in table, table

    # Accepting everything gives exactly the files git had: the names were the right files.
    ids = [h["id"] for h in hunks]
    p = stet("accept", *ids, cwd=repo)
    assert p.returncode == 0, p.stderr
    for n, name in enumerate(ODD_NAMES):
        assert (repo / name).read_bytes() == f"one\nTWO {n}\n".encode()
    assert (repo / "new name \u00e9.txt").read_bytes() == b"r1\nr2\nr3\nR4\n"
    assert not (repo / "old name \u00e9.txt").exists()
    assert (repo / "fresh \u00e9 one.txt").read_bytes() == b"hello\n"


def test_a_patch_that_does_not_fit_names_the_file_that_does_not(tmp_path):
    """With a task, a diff that does not fit is tried against the task's applied hunks; when
    that cannot help either, the error names the file that does not fit, not another file of
    the patch (here a created file, which fits)."""
    repo = make_repo(tmp_path / "r")
    (repo / "one.txt").write_bytes(b"a\nb\n")
    (repo / "two.txt").write_bytes(b"x\ny\n")
    commit_all(repo)
    (repo / "one.txt").write_bytes(b"a\nB\n")
    (repo / "two.txt").write_bytes(b"x\nY\n")
    (repo / "fresh.txt").write_bytes(b"new\n")
    git("add", "-A", cwd=repo)
    diff = git("diff", "--cached", cwd=repo)
    git("reset", "-q", "--hard", cwd=repo)
    (repo / "two.txt").write_bytes(b"x\nZ\n")  # the developer changed the line the patch changes
    for extra in ([], ["--task", "t1"]):
        p = stet("propose", "--patch", "-", *extra, cwd=repo, input=diff)
        assert p.returncode == 2, (extra, p.stdout, p.stderr)
        assert "two.txt" in p.stderr and "'Z\\n'" in p.stderr, (extra, p.stderr)
        assert "fresh.txt" not in p.stderr and "one.txt" not in p.stderr, (extra, p.stderr)
