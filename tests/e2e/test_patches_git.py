"""The unified-diff parser and writer against real git: `git diff` output parses, and
`git apply` takes what the writer writes."""

from __future__ import annotations

import subprocess

from hypothesis import given, settings
from hypothesis import strategies as st

from stet.domain.patches import apply_file, format_file, parse
from support.clitools import commit_all, git, make_repo


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
