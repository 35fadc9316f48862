"""An agent never reaches past the workspace through the git Stet runs.

An agent writes files as the developer: it can plant what makes git run a program - the
repository's config (core.fsmonitor, hooks, filters, textconv, an external diff, a pager),
the attributes that name a filter, the developer's global config - or point a worktree's
`.git` at a git folder of its own. Every planted program here appends to a marker file; the
marker must never appear, whatever Stet runs (capture, snapshots, `stet run` in place and in
a worktree, the hooks, doctor, and every function of `stet.workspace.git`), and Stet must
still see exactly what changed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from support.capturetools import B_BASE, agent_repo, hunks, kinds
from support.clitools import git, snapshot, stet, stet_json
from support.scripted_agent import A_BASE, R_BASE

HOOKS = (
    "applypatch-msg pre-applypatch post-applypatch pre-commit pre-merge-commit prepare-commit-msg commit-msg "
    "post-commit pre-rebase post-checkout post-merge pre-push pre-receive update proc-receive post-receive "
    "post-update reference-transaction push-to-checkout pre-auto-gc post-rewrite sendemail-validate "
    "fsmonitor-watchman p4-changelist p4-prepare-changelist p4-post-changelist p4-pre-submit post-index-change"
).split()


class Trap:
    """Programs that would run if git were let run them: each leaves a line in `ran`."""

    def __init__(self, base: Path):
        self.base = base
        base.mkdir(parents=True, exist_ok=True)
        self.ran = base / "ran"
        self.program = self._script("evil", 'echo "$(basename "$0") $*" >> "{ran}"\nexit 0\n')
        # A filter, pager or textconv that passes its input on: git gets on as if nothing happened.
        self.passing = self._script("evil-filter", 'echo "filter $*" >> "{ran}"\nexec cat "$@"\n')
        self.hooks = base / "hooks"
        self.hooks.mkdir(exist_ok=True)
        for name in HOOKS:
            os.symlink(self.program, self.hooks / name)

    def _script(self, name: str, body: str) -> Path:
        path = self.base / name
        path.write_text("#!/bin/sh\n" + body.format(ran=self.ran))
        path.chmod(0o755)
        return path

    def config(self) -> str:
        """Config that makes git run programs, as an agent would write it."""
        p, f = self.program, self.passing
        return (
            f"[core]\n\tfsmonitor = {p}\n\thooksPath = {self.hooks}\n\tpager = {f}\n\tsshCommand = {p}\n"
            f"\teditor = {p}\n\talternateRefsCommand = {p}\n\taskPass = {p}\n"
            f'[diff]\n\texternal = {p}\n[diff "evil"]\n\ttextconv = {f}\n\tcommand = {p}\n'
            f'[filter "evil"]\n\tclean = {f}\n\tsmudge = {f}\n\trequired = true\n'
            f'[filter "odd.name=x"]\n\tclean = {f}\n\tsmudge = {f}\n'
            f'[filter "proc"]\n\tprocess = {p}\n\trequired = true\n'
            f'[merge "evil"]\n\tdriver = {p}\n[pager]\n\tdiff = {f}\n\tstatus = {f}\n'
            f"[gc]\n\tauto = 1\n\tautoPackLimit = 1\n[maintenance]\n\tauto = true\n"
            f"[credential]\n\thelper = !{p}\n[sequence]\n\teditor = {p}\n"
        )

    ATTRIBUTES = "*.txt filter=evil diff=evil merge=evil\n*.py filter=proc\n*.md filter=odd.name=x\n"
    # Only in the developer's global config and attributes: git must not read that config at all.
    HOME_ONLY = "*.cfg filter=home diff=home\n"

    def plant(self, repo: Path) -> None:
        """Into the repository: its config, its hooks, its attributes (the work tree's were
        committed by `planted_repo`)."""
        gitdir = repo / ".git"
        with open(gitdir / "config", "a") as f:
            f.write(self.config())
        (gitdir / "info").mkdir(exist_ok=True)
        (gitdir / "info" / "attributes").write_text(self.ATTRIBUTES)
        for name in HOOKS:
            target = gitdir / "hooks" / name
            if not target.exists():
                os.symlink(self.program, target)

    def environment(self, home: Path) -> dict[str, str]:
        """A developer environment with global and system config planted, and git variables
        that name programs (the developer's own, but Stet must not depend on them either)."""
        home.mkdir(parents=True, exist_ok=True)
        f = self.passing
        only_here = (
            f'[filter "home"]\n\tclean = {f}\n\tsmudge = {f}\n\trequired = true\n[diff "home"]\n\ttextconv = {f}\n'
        )
        # What the developer's config says git should not list stays unlisted (it runs nothing).
        only_here += f"[core]\n\texcludesFile = {home}/my-ignores\n"
        (home / "my-ignores").write_text("*.swp\n")
        (home / ".gitconfig").write_text(self.config() + only_here)
        (home / ".config" / "git").mkdir(parents=True, exist_ok=True)
        (home / ".config" / "git" / "config").write_text(self.config() + only_here)
        (home / ".config" / "git" / "attributes").write_text(self.HOME_ONLY)
        system = home / "system-gitconfig"
        system.write_text(self.config())
        p = str(self.program)
        return {
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "GIT_CONFIG_SYSTEM": str(system),
            "GIT_CONFIG_PARAMETERS": f"'core.fsmonitor'='{p}' 'core.hookspath'='{self.hooks}'",
            "GIT_CONFIG_COUNT": "1",
            "GIT_CONFIG_KEY_0": "diff.external",
            "GIT_CONFIG_VALUE_0": p,
            "GIT_EXTERNAL_DIFF": p,
            "GIT_PAGER": str(f),
            "PAGER": str(f),
            "GIT_EDITOR": p,
            "GIT_SSH_COMMAND": p,
            "GIT_ASKPASS": p,
        }

    def check(self, what: str) -> None:
        ran = self.ran.read_text() if self.ran.exists() else ""
        assert ran == "", f"{what}: git ran programs the agent planted:\n{ran}"


def planted_repo(root: Path) -> Path:
    """The capture tests' repository, with attributes that name the planted filters committed
    (so a checkout of it applies them) and a Markdown file for the oddly named filter."""
    agent_repo(root)
    (root / ".gitattributes").write_text(Trap.ATTRIBUTES)
    (root / "notes.md").write_text("notes\n")
    (root / "conf.cfg").write_text("key = 1\n")
    git("add", "-A", cwd=root)
    git("commit", "-q", "-m", "attributes", cwd=root)
    return root


@pytest.fixture
def trapped(tmp_path):
    repo = planted_repo(tmp_path / "repo")
    trap = Trap(tmp_path / "trap")
    trap.plant(repo)
    env = trap.environment(tmp_path / "home")
    return repo, trap, env


def safe_git(*args: str, cwd: Path) -> str:
    """The test's own look at the repository, with everything planted switched off."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update({"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null"})
    p = subprocess.run(
        ["git", "-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
    )
    assert p.returncode == 0, p.stderr
    return p.stdout


def test_no_planted_program_runs_whatever_stet_does_with_git(trapped):
    repo, trap, env = trapped
    a_new = A_BASE.replace("LIMIT = 10", "LIMIT = 20")

    # A capture against git's index, then against HEAD: the edits are seen, the baseline put back.
    (repo / "a.py").write_text(a_new)
    (repo / "b.txt").write_text(B_BASE + "delta\n")
    (repo / "made.txt").write_text("made\n")
    (repo / "conf.cfg").write_text("key = 2\n")
    (repo / ".a.py.swp").write_text("an editor's swap file\n")
    answer = stet_json("capture", cwd=repo, env=env)
    trap.check("stet capture")
    assert answer["refused"] == [] and kinds(answer["hunks"]) == [
        ("create", "made.txt", "pending"),
        ("edit", "a.py", "pending"),
        ("edit", "b.txt", "pending"),
        ("edit", "conf.cfg", "pending"),
    ]
    assert (repo / "a.py").read_text() == A_BASE and not (repo / "made.txt").exists()
    assert (repo / ".a.py.swp").exists(), "ignored by the developer's global excludesFile: not captured"
    (repo / "notes.md").write_text("notes, changed\n")
    answer = stet_json("capture", "--base", "HEAD", cwd=repo, env=env)
    trap.check("stet capture --base HEAD")
    assert kinds(answer["hunks"]) == [("edit", "notes.md", "pending")]

    # A whole snapshot, then `stet run` in place (a snapshot of its own, the agent, a capture).
    assert stet("snapshot", "--all", "--task", "s", cwd=repo, env=env).returncode == 0
    trap.check("stet snapshot --all")
    p = stet("run", "--task", "r", "--", "sh", "-c", "echo more >> b.txt", cwd=repo, env=env)
    assert p.returncode == 0, p.stderr
    trap.check("stet run")
    assert [h["newText"] for h in hunks(repo, "--task", "r")] == ["more\n"]

    # `stet run --worktree`: git makes a worktree (a checkout: smudge filters, post-checkout and
    # reference-transaction hooks), takes a tree of it (clean filters), compares, removes it.
    p = stet("run", "--worktree", "--task", "w", "--", "sh", "-c", "echo more >> a.py", cwd=repo, env=env)
    assert p.returncode == 0, p.stderr
    trap.check("stet run --worktree")
    assert [h["newText"] for h in hunks(repo, "--task", "w")] == ["more\n"]
    assert "kept" not in p.stderr and safe_git("worktree", "list", cwd=repo).count("\n") == 1

    # An agent that leaves the worktree failing: the worktree is kept; doctor lists it.
    p = stet("run", "--worktree", "--", "sh", "-c", "echo x >> b.txt; exit 3", cwd=repo, env=env)
    assert p.returncode == 3 and "the worktree is kept at" in p.stderr
    trap.check("stet run --worktree (kept)")
    assert stet("doctor", cwd=repo, env=env).returncode == 1
    trap.check("stet doctor")
    # Removed without running git in it (its checkout has the planted attributes), then forgotten.
    shutil.rmtree(p.stderr.split("the worktree is kept at ")[1].split(" ")[0])
    safe_git("worktree", "prune", cwd=repo)

    # The Claude Code hooks: a snapshot before the write, a record after it, a capture at the end.
    def hook(event: str, extra: dict) -> None:
        body = {"session_id": "s1", "cwd": str(repo), "hook_event_name": event, **extra}
        p = stet("hook", "claude-code", cwd=repo, env=env, input=json.dumps(body))
        assert p.returncode == 0, p.stderr

    tool = {"tool_name": "Edit", "tool_input": {"file_path": str(repo / "r.txt")}}
    hook("PreToolUse", tool)
    (repo / "r.txt").write_text(R_BASE.replace("r1\n", "R1\n"))
    hook("PostToolUse", tool)
    (repo / "r.txt").write_text(R_BASE.replace("r1\n", "R1\n").replace("r8\n", "R8\n"))  # split three ways
    hook("Stop", {})
    trap.check("stet hook claude-code")
    assert [(h["oldText"], h["newText"]) for h in hunks(repo, "--task", "claude-s1")] == [("r1\n", "R1\n")]


def test_every_git_call_of_stet_is_hardened(trapped, monkeypatch, tmp_path):
    """Each function of stet.workspace.git, called in the planted repository with the planted
    environment: the door every git call of Stet goes through (pull and watch use it too)."""
    from stet.workspace import git as g

    repo, trap, env = trapped
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    (repo / "a.py").write_text(A_BASE + "# more\n")
    (repo / "notes.md").write_text("changed\n")
    (repo / "conf.cfg").write_text("key = 2\n")
    top = g.toplevel(str(repo))
    assert top == str(repo.resolve())
    assert g.head(top) and g.resolve(top, "HEAD")
    assert set(g.changed(top, None)) == {"a.py", "notes.md", "conf.cfg"}
    assert "a.py" in g.listed(top)
    entries = g.entries(top, None)
    assert g.contents(top, [entries["a.py"][1]])[entries["a.py"][1]] == A_BASE.encode()
    assert g.renames({"x.txt": b"one\ntwo\nthree\n"}, {"y.txt": b"one\ntwo\nthree\n"}) == [("x.txt", "y.txt")]
    assert g.merge(b"a\nb\nc\n", b"a\nb\nc\n", b"a\nB\nc\n") == b"a\nB\nc\n"
    assert g.root_commits(top)
    path = str(tmp_path / "stet-run-x" / "work")
    g.add_worktree(top, path, "HEAD")
    assert Path(path, "a.py").read_text() == A_BASE
    assert g.snapshot_tree(path) and g.run_worktrees(top) == [path]
    g.remove_worktree(top, path)
    assert not os.path.exists(path)
    trap.check("stet.workspace.git")


def test_stet_refuses_a_worktree_whose_git_file_names_another_git_folder(tmp_path):
    """The attack as it was first found: the agent points its worktree's `.git` at a
    git folder it made (the real objects through `alternates`, `core.fsmonitor = ./script`)."""
    repo = agent_repo(tmp_path / "repo")
    marker = tmp_path / "ran"
    agent = tmp_path / "agent.sh"
    agent.write_text(
        f"""#!/bin/sh
set -e
real=$(git rev-parse --path-format=absolute --git-common-dir)
own=$(git rev-parse --path-format=absolute --git-dir)
fake="$PWD/evil.git"
mkdir -p "$fake/objects/info" "$fake/refs/heads"
echo "$real/objects" > "$fake/objects/info/alternates"
cp "$own/HEAD" "$own/index" "$fake/"
printf '[core]\\n\\trepositoryformatversion = 0\\n\\tbare = false\\n\\tfsmonitor = ./script\\n' > "$fake/config"
printf '#!/bin/sh\\necho "fsmonitor $*" >> {marker}\\n' > script
chmod +x script
printf 'gitdir: %s\\n' "$fake" > .git
echo "delta" >> b.txt
"""
    )
    agent.chmod(0o755)
    before = snapshot(repo)
    p = stet("run", "--worktree", "--", str(agent), cwd=repo)
    assert not marker.exists(), f"the agent's fsmonitor ran: {marker.read_text()}"
    assert p.returncode == 1, p.stderr  # the agent succeeded, Stet refused what it left: a refusal
    assert "kept worktree" not in p.stderr, p.stderr
    assert "no longer names the git folder Stet made" in p.stderr, p.stderr
    assert "evil.git" in p.stderr and "nothing was captured from it" in p.stderr
    assert hunks(repo) == [], "nothing of a tampered worktree is proposed"
    assert snapshot(repo) == before
    # Cleaned up without running git in it: the folder, its registration, Stet's temp folder.
    worktree = p.stderr.split("the agent works in ")[1].split(" ")[0]
    assert not os.path.exists(worktree)  # the worktree is Stet's temporary folder itself
    assert git("worktree", "list", cwd=repo).count("\n") == 1
    assert not marker.exists()


@pytest.mark.parametrize("how", ["git-folder", "symlink", "commondir"])
def test_other_ways_of_swapping_the_worktree_git_are_refused(tmp_path, how):
    repo = agent_repo(tmp_path / "repo")
    marker = tmp_path / "ran"
    fake = tmp_path / "fake"
    script = f"printf '#!/bin/sh\\necho ran >> {marker}\\n' > {tmp_path}/evil; chmod +x {tmp_path}/evil; "
    if how == "git-folder":  # the worktree made its own repository where its .git file was
        body = f"rm .git && git init -q . && git add -A && git config core.fsmonitor {tmp_path}/evil"
    elif how == "symlink":  # the .git file made a symlink to a git folder elsewhere
        body = f"git init -q --bare {fake} && git -C {fake} config core.fsmonitor {tmp_path}/evil; rm .git; ln -s {fake} .git"
    else:  # the worktree's own git folder (in the repository's .git/worktrees/) names another common folder
        body = (
            f"git init -q --bare {fake} && git -C {fake} config core.fsmonitor {tmp_path}/evil && "
            f'echo {fake} > "$(git rev-parse --git-dir)/commondir"'
        )
    p = stet("run", "--worktree", "--", "sh", "-c", script + body + "; echo delta >> b.txt", cwd=repo)
    assert not marker.exists(), marker.read_text()
    if how == "commondir":
        assert "the git folder Stet made" in p.stderr and "commondir" in p.stderr, p.stderr
    else:
        assert "no longer names the git folder Stet made" in p.stderr, p.stderr
    assert hunks(repo) == []
    assert (repo / "b.txt").read_text() == B_BASE


def test_a_git_folder_is_never_content(tmp_path):
    """A folder holding HEAD, objects/ and refs/ is a git folder wherever it is: not proposed,
    not taken out, not snapshotted, refused when named."""
    repo = agent_repo(tmp_path / "repo")

    def make_git_folder(where: Path) -> dict[str, bytes]:
        subprocess.run(["git", "init", "-q", "--bare", str(where)], check=True)
        (where / "objects" / "info" / "alternates").write_text(str(repo / ".git" / "objects") + "\n")
        return {str(p.relative_to(where)): p.read_bytes() for p in where.rglob("*") if p.is_file()}

    made = make_git_folder(repo / "evil.git")
    (repo / "b.txt").write_text(B_BASE + "delta\n")
    answer = stet_json("capture", cwd=repo)
    assert [Path(h["uri"]).name for h in answer["hunks"]] == ["b.txt"]
    assert answer["refused"] == []
    assert {
        str(p.relative_to(repo / "evil.git")): p.read_bytes() for p in (repo / "evil.git").rglob("*") if p.is_file()
    } == made
    p = stet("capture", "evil.git/config", cwd=repo)
    assert p.returncode == 2 and "git folder" in p.stderr, p.stderr

    # In place with a snapshot: an agent that makes one (in a folder of its own) gets it left alone.
    p = stet("run", "--task", "t", "--", "sh", "-c", "git init -q --bare sub/x.git && echo more >> b.txt", cwd=repo)
    assert p.returncode == 0 and "1 hunk(s) in 1 file(s)" in p.stderr, p.stderr
    assert [h["newText"] for h in hunks(repo, "--task", "t")] == ["more\n"]
    assert (repo / "sub" / "x.git" / "HEAD").exists()

    # In a worktree, without touching its .git: what it changed is proposed, its git folder is not.
    p = stet(
        "run", "--worktree", "--task", "w", "--", "sh", "-c", "git init -q --bare y.git && echo w >> r.txt", cwd=repo
    )
    assert p.returncode == 0, p.stderr
    assert [Path(h["uri"]).name for h in hunks(repo, "--task", "w")] == ["r.txt"]
