"""Git, run as a process: where a work tree is, what changed against the index or a commit,
the contents git holds, rename detection, three-way merges of one file, worktrees.

Output is read with `-z` (names exactly as stored) and without pathspecs (a name like
`*.py` is a name, not a pattern). The environment's GIT_DIR and friends are dropped: Stet
may be started from a git hook, and must look at the workspace, not at the hook's repo.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Mapping

from ..errors import InvalidParams

_DROP = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES")
INDEX = None  # the baseline "git's index"


class GitError(InvalidParams):
    """Git failed or is missing; the message says which command and why."""


def _env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _DROP}
    env.update({"LC_ALL": "C", "GIT_TERMINAL_PROMPT": "0", **(extra or {})})
    return env


def run(
    cwd: str, *args: str, input: bytes | None = None, env: Mapping[str, str] | None = None, ok: Iterable[int] = (0,)
) -> subprocess.CompletedProcess:
    try:
        p = subprocess.run(
            ["git", "-c", "core.quotepath=false", *args], cwd=cwd, input=input, capture_output=True, env=_env(env)
        )
    except FileNotFoundError:
        raise GitError("git is not installed (or not on PATH): capture needs it") from None
    if p.returncode not in ok:
        message = p.stderr.decode("utf-8", "replace").strip() or f"exit code {p.returncode}"
        raise GitError(f"git {args[0]} failed in {cwd}: {message}")
    return p


def _names(out: bytes) -> list[str]:
    return [n.decode("utf-8", "surrogateescape") for n in out.split(b"\0") if n]


def toplevel(path: str) -> str | None:
    """The root of the git work tree holding `path`, None outside any."""
    try:
        p = run(path, "rev-parse", "--show-toplevel", ok=(0, 128))
    except GitError:
        return None
    return os.path.realpath(p.stdout.decode().strip()) if p.returncode == 0 else None


def head(root: str) -> str | None:
    p = run(root, "rev-parse", "--verify", "-q", "HEAD^{commit}", ok=(0, 1))
    return p.stdout.decode().strip() if p.returncode == 0 else None


def resolve(root: str, ref: str) -> str:
    """The tree a ref names (a commit, a tag, a tree); refuses anything else."""
    p = run(root, "rev-parse", "--verify", "-q", f"{ref}^{{tree}}", ok=(0, 1, 128))
    if p.returncode != 0:
        raise GitError(f"{ref!r} names no commit or tree in {root}")
    return p.stdout.decode().strip()


def changed(root: str, tree: str | None) -> list[str]:
    """Paths whose file differs from the index (tree None) or from `tree`, deletions included,
    plus the untracked files that are not ignored."""
    diff = run(root, "diff", "--name-only", "-z", "--no-renames", *([tree] if tree else []), "--")
    extra = run(root, "ls-files", "-o", "--exclude-standard", "-z")
    return list(dict.fromkeys(_names(diff.stdout) + _names(extra.stdout)))


def listed(root: str) -> list[str]:
    """Every file git would show: tracked and untracked, ignored ones left out."""
    return list(dict.fromkeys(_names(run(root, "ls-files", "-co", "--exclude-standard", "-z").stdout)))


def entries(root: str, tree: str | None) -> dict[str, tuple[str, str]]:
    """path -> (mode, blob id) in the index (tree None) or in `tree`. A path with conflict
    stages in the index gets the mode "conflict"."""
    out: dict[str, tuple[str, str]] = {}
    if tree is None:
        for item in run(root, "ls-files", "-s", "-z").stdout.split(b"\0"):
            if not item:
                continue
            meta, _, name = item.partition(b"\t")
            mode, sha, stage = meta.decode().split()
            path = name.decode("utf-8", "surrogateescape")
            out[path] = (mode, sha) if stage == "0" and path not in out else ("conflict", "")
    else:
        for item in run(root, "ls-tree", "-r", "-z", "--full-tree", tree).stdout.split(b"\0"):
            if not item:
                continue
            meta, _, name = item.partition(b"\t")
            mode, _kind, sha = meta.decode().split()
            out[name.decode("utf-8", "surrogateescape")] = (mode, sha)
    return out


def contents(root: str, shas: Iterable[str]) -> dict[str, bytes]:
    """The content of each blob, read in one `git cat-file --batch`."""
    wanted = list(dict.fromkeys(shas))
    if not wanted:
        return {}
    out = run(root, "cat-file", "--batch", input="".join(f"{s}\n" for s in wanted).encode()).stdout
    blobs: dict[str, bytes] = {}
    pos = 0
    for sha in wanted:
        end = out.index(b"\n", pos)
        header = out[pos:end].decode().split()
        if len(header) < 3:
            raise GitError(f"git has no content {sha}")
        size = int(header[2])
        blobs[sha] = out[end + 1 : end + 1 + size]
        pos = end + 1 + size + 1
    return blobs


def renames(deleted: Mapping[str, bytes], created: Mapping[str, bytes]) -> list[tuple[str, str]]:
    """Which deleted file became which created one, by git's rename detection (the same
    similarity git diff -M uses), computed in a private, temporary repository."""
    if not deleted or not created:
        return []
    with tempfile.TemporaryDirectory(prefix="stet-renames-") as tmp:
        run(tmp, "init", "-q", "--bare", ".")
        trees = []
        for n, files in enumerate((deleted, created)):
            index = {"GIT_INDEX_FILE": os.path.join(tmp, f"index{n}"), "GIT_DIR": tmp}
            lines = []
            for path, data in files.items():
                sha = run(tmp, "hash-object", "-w", "--stdin", input=data, env={"GIT_DIR": tmp}).stdout.decode().strip()
                lines.append(f"100644 {sha}\t{path}\0".encode("utf-8", "surrogateescape"))
            run(tmp, "update-index", "-z", "--add", "--index-info", input=b"".join(lines), env=index)
            trees.append(run(tmp, "write-tree", env=index).stdout.decode().strip())
        out = run(tmp, "diff-tree", "-r", "-M", "-z", "--name-status", *trees, env={"GIT_DIR": tmp}).stdout
    fields = _names(out)
    pairs = []
    i = 0
    while i < len(fields):
        status = fields[i]
        if status.startswith("R"):
            pairs.append((fields[i + 1], fields[i + 2]))
            i += 3
        else:
            i += 2
    return pairs


def merge(ours: bytes, base: bytes, theirs: bytes) -> bytes | None:
    """`ours` with the change from `base` to `theirs` made in it (git merge-file); None when
    the two changes touch the same lines (or lines next to each other)."""
    with tempfile.TemporaryDirectory(prefix="stet-merge-") as tmp:
        names = []
        for name, data in (("ours", ours), ("base", base), ("theirs", theirs)):
            path = os.path.join(tmp, name)
            with open(path, "wb") as f:
                f.write(data)
            names.append(path)
        p = run(tmp, "merge-file", "-p", "-q", *names, ok=range(0, 128))
    return p.stdout if p.returncode == 0 else None


def add_worktree(root: str, path: str, rev: str) -> None:
    run(root, "worktree", "add", "-q", "--detach", path, rev)


def remove_worktree(root: str, path: str) -> None:
    """Remove a worktree this process made (and its registration); a folder already gone is fine."""
    if os.path.isdir(path):
        p = run(root, "worktree", "remove", "--force", "--force", path, ok=range(0, 256))
        if p.returncode != 0 and os.path.isdir(path):
            shutil.rmtree(path, ignore_errors=True)
    run(root, "worktree", "prune", ok=range(0, 256))
    parent = os.path.dirname(path)
    if os.path.basename(parent).startswith("stet-run-"):
        try:
            os.rmdir(parent)  # the temporary folder `stet run` made for it
        except OSError:
            pass


def run_worktrees(root: str) -> list[str]:
    """Worktrees of the repository at `root` that `stet run --worktree` made and left."""
    top = toplevel(root)
    if top is None:
        return []
    out = run(top, "worktree", "list", "--porcelain", "-z").stdout.split(b"\0")
    paths = [
        item[len(b"worktree ") :].decode("utf-8", "surrogateescape") for item in out if item.startswith(b"worktree ")
    ]
    # The worktree is the temporary folder itself (older runs: a folder `work` inside it).
    return [p for p in paths if any(os.path.basename(f).startswith("stet-run-") for f in (p, os.path.dirname(p)))]


def snapshot_tree(worktree: str) -> str:
    """A tree object of everything in `worktree` (ignored files left out), via its own index."""
    run(worktree, "add", "-A", "--", ".")
    return run(worktree, "write-tree").stdout.decode().strip()


def root_commits(path: str) -> list[str]:
    """The commits without parents that HEAD descends from (sorted): what every clone of a
    repository shares, whatever its remote or its folder. Empty outside git or before a commit."""
    try:
        p = run(path, "rev-list", "--max-parents=0", "HEAD", ok=(0, 128, 129))
    except GitError:
        return []
    return sorted(p.stdout.decode().split()) if p.returncode == 0 else []
