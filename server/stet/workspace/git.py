"""Git, run as a process: where a work tree is, what changed against the index or a commit,
the contents git holds, rename detection, three-way merges of one file, worktrees.

Output is read with `-z` (names exactly as stored) and without pathspecs (a name like
`*.py` is a name, not a pattern).

No program but git runs because Stet ran git. An agent writes files as the developer: it can
plant what makes git start a program - the repository's config (core.fsmonitor, hooks,
filters, a pager, an external diff), the attributes that name a filter, the developer's own
config files - so every call forces these off in the command line's config, which beats every
file (`_FORCED`, and each filter the config names, emptied just before the call), reads no
system or global config (the few harmless settings that change what git lists are carried
over: `_carried`), and drops every GIT_* variable of the environment (Stet may also be started
from a git hook, and must look at the workspace, not at the hook's repository).
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Mapping

from ..errors import InvalidParams
from . import modes

INDEX = None  # the baseline "git's index"

# Build output nobody asked to review (Python's bytecode, written by any test run): left out of
# what git lists as untracked, like an ignored file; a tracked one is still a file. In
# gitignore's syntax (tree.is_build_output is the same rule without git).
BUILD_OUTPUT = ("__pycache__/", "*.pyc", "*.pyo")
_NOT_BUILD_OUTPUT = tuple(f"--exclude={p}" for p in BUILD_OUTPUT)

# Command-line config (it beats every config file): nothing git reads can start a program.
# (An external diff and textconv run only for patches: every diff here is a list of names,
# and says --no-ext-diff --no-textconv besides.)
_FORCED = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("core.pager", "cat"),
    ("core.quotepath", "false"),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
)
# What changes which files git lists or how it converts them, and runs nothing: kept from the
# developer's system and global config, which git is not let read itself.
_CARRY = ("core.excludesfile", "core.attributesfile", "core.autocrlf", "core.eol", "safe.directory")
# The commands (as Stet calls them) that never read a work tree's files, so never run a filter.
# Any other may (even `write-tree` does): the filters are emptied before it runs.
_NO_WORK_TREE = frozenset(
    {"cat-file", "config", "diff-tree", "hash-object", "init", "ls-tree", "merge-file"} | {"rev-list", "rev-parse"}
)


class GitError(InvalidParams):
    """Git failed or is missing; the message says which command and why."""


@functools.cache
def _carried() -> tuple[tuple[str, str], ...]:
    """The harmless settings of the developer's system and global config (read once)."""
    env = _bare_env()
    out: list[tuple[str, str]] = []
    for scope in ("--system", "--global"):
        try:
            p = subprocess.run(
                ["git", "config", scope, "--includes", "-z", "--get-regexp", "^(" + "|".join(_CARRY) + ")$"],
                cwd="/",
                capture_output=True,
                env=env,
            )
        except FileNotFoundError:
            return ()
        out += _pairs(p.stdout) if p.returncode == 0 else []
    return tuple(out)


def _pairs(out: bytes) -> list[tuple[str, str]]:
    """(key, value) of `git config -z` output."""
    pairs = []
    for item in out.split(b"\0"):
        if item:
            key, _, value = item.decode("utf-8", "surrogateescape").partition("\n")
            pairs.append((key, value))
    return pairs


def _bare_env() -> dict[str, str]:
    """The environment without any GIT_* variable (they can name programs, or another repository)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update({"LC_ALL": "C", "GIT_TERMINAL_PROMPT": "0"})
    return env


def _env(extra: Mapping[str, str] | None, config: Iterable[tuple[str, str]]) -> dict[str, str]:
    env = _bare_env()
    env.update({"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, **(extra or {})})
    pairs = list(config)
    env["GIT_CONFIG_COUNT"] = str(len(pairs))
    for n, (key, value) in enumerate(pairs):
        env[f"GIT_CONFIG_KEY_{n}"], env[f"GIT_CONFIG_VALUE_{n}"] = key, value
    return env


def _no_filters(cwd: str, env: Mapping[str, str]) -> list[tuple[str, str]]:
    """Every filter the repository's config names, emptied: a filter with no command does nothing."""
    p = subprocess.run(
        ["git", "config", "-z", "--name-only", "--get-regexp", r"^filter\."], cwd=cwd, capture_output=True, env=env
    )
    names = {n.decode("utf-8", "surrogateescape") for n in p.stdout.split(b"\0") if n}
    drivers = {n[len("filter.") : n.rindex(".")] for n in names if n.count(".") >= 2}
    out = []
    for name in sorted(drivers):
        out += [(f"filter.{name}.{key}", "") for key in ("clean", "smudge", "process")]
        out.append((f"filter.{name}.required", "false"))
    return out


def run(
    cwd: str,
    *args: str,
    input: bytes | None = None,
    env: Mapping[str, str] | None = None,
    ok: Iterable[int] = (0,),
    gitdir: str | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """Run git in `cwd`, hardened as the module says. `gitdir`: the git folder to use, named
    instead of found from `cwd` (a worktree's `.git` file is then not read at all)."""
    extra = dict(env or {})
    if gitdir is not None:
        extra.update({"GIT_DIR": gitdir, "GIT_WORK_TREE": cwd})
    config = [*_carried(), *_FORCED]
    try:
        if args[0] not in _NO_WORK_TREE:
            config += _no_filters(cwd, _env(extra, config))
        p = subprocess.run(
            ["git", "--no-pager", *args],
            cwd=cwd,
            input=input,
            capture_output=True,
            env=_env(extra, config),
            umask=modes.child_umask(),  # what git writes for the call: its caller's umask
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


def changed(root: str, tree: str | None, gitdir: str | None = None) -> list[str]:
    """Paths whose file differs from the index (tree None) or from `tree`, deletions included,
    plus the untracked files that are neither ignored nor build output."""
    flags = ("--name-only", "-z", "--no-renames", "--no-ext-diff", "--no-textconv")
    diff = run(root, "diff", *flags, *([tree] if tree else []), "--", gitdir=gitdir)
    extra = run(root, "ls-files", "-o", "--exclude-standard", *_NOT_BUILD_OUTPUT, "-z", gitdir=gitdir)
    return list(dict.fromkeys(_names(diff.stdout) + _names(extra.stdout)))


def listed(root: str) -> list[str]:
    """Every file git would show: tracked and untracked, ignored ones and untracked build output
    left out."""
    names = run(root, "ls-files", "-co", "--exclude-standard", *_NOT_BUILD_OUTPUT, "-z").stdout
    return list(dict.fromkeys(_names(names)))


def entries(root: str, tree: str | None, gitdir: str | None = None) -> dict[str, tuple[str, str]]:
    """path -> (mode, blob id) in the index (tree None) or in `tree`. A path with conflict
    stages in the index gets the mode "conflict"."""
    out: dict[str, tuple[str, str]] = {}
    if tree is None:
        for item in run(root, "ls-files", "-s", "-z", gitdir=gitdir).stdout.split(b"\0"):
            if not item:
                continue
            meta, _, name = item.partition(b"\t")
            mode, sha, stage = meta.decode().split()
            path = name.decode("utf-8", "surrogateescape")
            out[path] = (mode, sha) if stage == "0" and path not in out else ("conflict", "")
    else:
        for item in run(root, "ls-tree", "-r", "-z", "--full-tree", tree, gitdir=gitdir).stdout.split(b"\0"):
            if not item:
                continue
            meta, _, name = item.partition(b"\t")
            mode, _kind, sha = meta.decode().split()
            out[name.decode("utf-8", "surrogateescape")] = (mode, sha)
    return out


def sizes(root: str, shas: Iterable[str], gitdir: str | None = None) -> dict[str, int]:
    """The size of each blob, without reading it (`git cat-file --batch-check`)."""
    wanted = list(dict.fromkeys(shas))
    if not wanted:
        return {}
    query = "".join(f"{s}\n" for s in wanted).encode()
    out = run(root, "cat-file", "--batch-check", input=query, gitdir=gitdir).stdout.decode().splitlines()
    found = {}
    for sha, line in zip(wanted, out, strict=False):
        header = line.split()
        if len(header) < 3:
            raise GitError(f"git has no content {sha}")
        found[sha] = int(header[2])
    return found


def contents(root: str, shas: Iterable[str], gitdir: str | None = None) -> dict[str, bytes]:
    """The content of each blob, read in one `git cat-file --batch` (check their `sizes` first:
    each is read whole)."""
    wanted = list(dict.fromkeys(shas))
    if not wanted:
        return {}
    query = "".join(f"{s}\n" for s in wanted).encode()
    out = run(root, "cat-file", "--batch", input=query, gitdir=gitdir).stdout
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
        out = run(
            tmp,
            "diff-tree",
            "-r",
            "-M",
            "-z",
            "--name-status",
            "--no-ext-diff",
            "--no-textconv",
            *trees,
            env={"GIT_DIR": tmp},
        ).stdout
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


def common_dir(root: str) -> str:
    """The repository's git folder that every worktree of it shares (its `.git`), a real path."""
    p = run(root, "rev-parse", "--path-format=absolute", "--git-common-dir")
    return os.path.realpath(p.stdout.decode("utf-8", "surrogateescape").strip())


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


def snapshot_tree(worktree: str, gitdir: str | None = None) -> str:
    """A tree object of everything in `worktree` (ignored files left out), via its own index."""
    run(worktree, "add", "-A", "--", ".", gitdir=gitdir)
    return run(worktree, "write-tree", gitdir=gitdir).stdout.decode().strip()


def root_commits(path: str) -> list[str]:
    """The commits without parents that HEAD descends from (sorted): what every clone of a
    repository shares, whatever its remote or its folder. Empty outside git or before a commit."""
    try:
        p = run(path, "rev-list", "--max-parents=0", "HEAD", ok=(0, 128, 129))
    except GitError:
        return []
    return sorted(p.stdout.decode().split()) if p.returncode == 0 else []


def commits_touching(root: str, name: str, most: int) -> list[str]:
    """The last `most` commits HEAD reaches that changed the file `name` (relative to `root`,
    the work tree's top), newest first. Empty before the first commit."""
    p = run(root, "rev-list", f"--max-count={most}", "HEAD", "--", f":(literal){name}", ok=(0, 128))
    return p.stdout.decode().split() if p.returncode == 0 else []


def files_at(root: str, wanted: Iterable[tuple[str, str]], limit: int) -> dict[tuple[str, str], bytes | None]:
    """(commit, name) -> that file's content in that commit; None when the commit has no regular
    file there, or one of more than `limit` bytes (not read)."""
    asked = [w for w in dict.fromkeys(wanted) if "\n" not in w[1] and "\r" not in w[1]]
    out: dict[tuple[str, str], bytes | None] = dict.fromkeys(wanted)
    if not asked:
        return out
    query = "".join(f"{c}:{n}\n" for c, n in asked).encode("utf-8", "surrogateescape")
    checked = run(root, "cat-file", "--batch-check", input=query).stdout.decode("utf-8", "replace").splitlines()
    blobs: dict[tuple[str, str], str] = {}
    for w, line in zip(asked, checked, strict=False):
        header = line.split()
        if len(header) == 3 and header[1] == "blob" and int(header[2]) <= limit:
            blobs[w] = header[0]
    found = contents(root, blobs.values())
    for w, sha in blobs.items():
        out[w] = found[sha]
    return out


def dirs(root: str) -> tuple[str, str, str] | None:
    """(the work tree's top, its git folder, the repository's common folder) of `root`; None
    outside git. One call: a process asks it once per root."""
    try:
        p = run(root, "rev-parse", "--show-toplevel", "--absolute-git-dir", "--git-common-dir", ok=(0, 128))
    except GitError:
        return None
    lines = p.stdout.decode("utf-8", "surrogateescape").splitlines()
    if p.returncode != 0 or len(lines) != 3:
        return None
    top, gitdir, common = lines
    return os.path.realpath(top), gitdir, os.path.realpath(os.path.join(root, common))


def head_stamp(gitdir: str, common: str) -> str:
    """What changes when HEAD may have moved, read without running git: HEAD itself, the ref it
    names and packed-refs (each file's inode, mtime and size). Equal stamps: HEAD did not move."""
    parts = []
    try:
        with open(os.path.join(gitdir, "HEAD"), "rb") as f:
            head = f.read(1024)
    except OSError:
        return ""
    parts.append(head.hex())
    ref = head[5:].strip().decode("utf-8", "surrogateescape") if head.startswith(b"ref: ") else None
    paths = [os.path.join(common, "packed-refs")]
    if ref is not None and ".." not in ref.split("/"):
        paths.append(os.path.join(common, ref))
    for path in paths:
        try:
            st = os.stat(path)
            parts.append(f"{st.st_ino}.{st.st_mtime_ns}.{st.st_size}")
        except OSError:
            parts.append("-")
    return ",".join(parts)
