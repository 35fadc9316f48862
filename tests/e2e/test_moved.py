"""A project that moves keeps its review (docs/protocol.md, "Paths in the store"): `mv` of the
folder (with an editor's server killed before it, and with none), a `cp -a` copy with its
`.stet/`, the same folder mounted at another path (`mount --bind`) and reached through a symlink
all open the same review: every status, range and text as it was, the uris at the place it is
opened from; accept, reject and undo work there; applied hunks are in their files; `stet status`,
`stet resume`, MCP and the editor read the same. Real processes, real files, both engines (a
PostgreSQL checkout that moved is another checkout of the same review)."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from support import clitools
from support.clitools import commit_all, make_repo, stet, stet_json
from support.harness import Session, rng, uri
from support.scenario import build, kill_an_accept
from support.workers import call, mcp_client

FIELDS = ("id", "proposalId", "taskId", "uri", "kind", "status", "range", "oldText", "newText", "newUri")
FIELDS += ("message", "feedback", "version", "decidedAt", "inFile")


@pytest.fixture
def cli(engine, tmp_path):
    """The `stet` calls of the test on the engine's store."""
    clitools.ENGINE_ENV.clear()
    if engine.pg:
        clitools.ENGINE_ENV["STET_DB"] = engine.db(tmp_path / "app")
    yield engine
    clitools.ENGINE_ENV.clear()


def _runner(root: Path):
    def run(*args: str, env: dict | None = None, check: bool = True) -> subprocess.CompletedProcess:
        p = stet(*args, cwd=root, env=env)
        assert not check or p.returncode == 0, (args, p.returncode, p.stdout, p.stderr)
        return p

    return run


def _made(root: Path, engine) -> dict:
    """The scenario's review in `root`; on SQLite with an accept killed after its commit too
    (its edit journaled: carried out where the store is next opened). A PostgreSQL checkout's
    journal is its own: a checkout that moved is another one (see the protocol)."""
    run = _runner(root)
    expected = build(root, run)
    if not engine.pg:
        kill_an_accept(run, expected)
    return expected


def _view(status: dict, root: Path) -> dict[str, dict]:
    """Every hunk, its paths relative to `root` (what must not change when the folder moves)."""
    at = root.as_uri() + "/"
    out = {}
    for h in status["hunks"]:
        v = {k: h.get(k) for k in FIELDS}
        for k in ("uri", "newUri"):
            if v[k] is not None:
                assert v[k].startswith(at), (k, v[k], at)
                v[k] = v[k][len(at) :]
        out[h["id"]] = v
    return out


def _same_review(root: Path, expected: dict, engine) -> None:
    """The review as it was made (`expected`, in its first folder), read in `root`."""
    before = _view(expected["status"], Path(expected["root"]))
    now = _view(stet_json("status", "--all", cwd=root), root)
    a3 = expected["ids"]["a3"]
    assert set(now) == set(before)
    for hid, h in before.items():
        if hid == a3 and not engine.pg:  # its journaled edit, carried out here, once
            assert (now[hid]["status"], now[hid]["inFile"], now[hid]["range"]) == ("applied", True, h["range"])
            continue
        if engine.pg and h["status"] == "applied":  # (in this checkout's files: judged here)
            assert now[hid]["inFile"] is True, hid
            now[hid]["inFile"] = h["inFile"]
        assert now[hid] == h, hid
    text = (root / "a.py").read_text()
    if not engine.pg:
        assert text.count("A14 = 14\n") == 1 and text == expected["files"]["a.py"].replace("a14 = 14\n", "A14 = 14\n")
    for name, content in expected["files"].items():
        if name != "a.py":
            assert (root / name).read_text() == content, name
    # (the hunk whose text holds the project's first uri: text, as written, and still in its file)
    (links,) = [h for h in now.values() if h["proposalId"] == "p-links"]
    assert links["status"] == "pending" and links["oldText"] == Path(expected["root"]).as_uri() + "/a.py\n"
    resume = stet_json("resume", "t1", cwd=root)
    assert [f["uri"] for f in resume["filesRead"]] == [(root / "a.py").as_uri()]
    assert resume["decisions"] == expected["resume"]["decisions"]
    assert [o["opId"] for o in stet_json("log", cwd=root)["ops"]][: len(expected["log"]["ops"])] == [
        o["opId"] for o in expected["log"]["ops"]
    ]


def _decide_there(root: Path, expected: dict) -> None:
    """Accept, reject and undo work where the review is now."""
    ids = expected["ids"]
    gone = next(h["id"] for h in expected["status"]["hunks"] if h["kind"] == "delete")
    stale = next(h["id"] for h in expected["status"]["hunks"] if h["status"] == "stale")
    stet_json("accept", ids["a5"], gone, cwd=root)
    assert "A26 = 26\n" in (root / "a.py").read_text() and not (root / "gone.txt").exists()
    stet_json("reject", stale, "--feedback", "no", cwd=root)
    stet_json("undo", ids["a1"], ids["create"], ids["rename"], cwd=root)
    assert (root / "a.py").read_text().startswith("a1 = 1\na2 = 2\n")
    assert not (root / "new.txt").exists() and (root / "old.txt").read_text() == "old\n"
    states = {h["id"]: h for h in stet_json("status", "--all", cwd=root)["hunks"]}
    assert states[ids["a5"]]["status"] == states[gone]["status"] == "applied"
    assert states[ids["a5"]]["inFile"] is True and states[stale]["status"] == "rejected"
    assert states[ids["a1"]]["status"] == states[ids["create"]]["status"] == "pending"
    assert all(h["uri"].startswith(root.as_uri() + "/") for h in states.values())


async def _mcp_reads(root: Path, expected: dict, engine) -> None:
    env = {**os.environ, **clitools.ENGINE_ENV}
    async with mcp_client(root, env=env) as mcp:
        error, _, data = await call(mcp, "review_status", task_id="t1")
    assert not error and data is not None
    pending = {h["id"] for h in data["hunks"]["pending"]}
    was = {h["id"] for h in expected["status"]["hunks"] if h["taskId"] == "t1" and h["status"] == "pending"}
    done = set() if engine.pg else {expected["ids"]["a3"]}  # (its journaled accept: carried out)
    assert pending == was - done
    assert all(h["uri"].startswith(root.as_uri() + "/") for hs in data["hunks"].values() for h in hs)


async def _editor_reads(root: Path, expected: dict, engine) -> None:
    """An editor opened on the folder where it is now: the same hunks, at its paths; it decides."""
    s = Session(root, init_options={"db": engine.db(Path(expected["root"]))} if engine.pg else None)
    await s.start()
    try:
        hunks = {h["id"]: h for h in await s.hunks()}
        assert all(h["uri"].startswith(root.as_uri() + "/") for h in hunks.values())
        (links,) = [h for h in hunks.values() if h["proposalId"] == "p-links"]
        await s.command("stet.accept", {"hunkIds": [links["id"]]})
        assert (root / "links.txt").read_text().splitlines()[1] == Path(expected["root"]).as_uri() + "/b.txt"
        (again,) = [h for h in await s.hunks() if h["id"] == links["id"]]
        assert again["status"] == "applied" and again["inFile"] is True
    finally:
        await s.stop()


@pytest.mark.parametrize("editor", [False, True], ids=["no-editor", "editor-killed"])
async def test_mv_of_the_project_keeps_its_review(cli, tmp_path, editor):
    root, moved = tmp_path / "app", tmp_path / "app2"
    expected = _made(root, cli)
    if editor:  # a window on the project, its server killed (kill -9) before the move
        s = Session(root, init_options={"db": cli.db(root)} if cli.pg else None)
        await s.start()
        s.open(root / "a.py")
        await s.wait_quiet()
        await s.kill()
        await s.died()
    root.rename(moved)
    _same_review(moved, expected, cli)
    await _mcp_reads(moved, expected, cli)
    _decide_there(moved, expected)
    await _editor_reads(moved, expected, cli)


async def test_a_copy_with_its_stet_folder_opens_the_same_review(cli, tmp_path):
    root, copy = tmp_path / "app", tmp_path / "copy"
    expected = _made(root, cli)
    subprocess.run(["cp", "-a", str(root), str(copy)], check=True)
    _same_review(copy, expected, cli)
    _same_review(root, expected, cli)  # the original too, where it is
    await _mcp_reads(copy, expected, cli)
    _decide_there(copy, expected)
    if not cli.pg:  # two stores now, each its own review: the original's is as it was
        original = {h["id"]: h["status"] for h in stet_json("status", "--all", cwd=root)["hunks"]}
        assert original[expected["ids"]["a5"]] == "pending" and original[expected["ids"]["a1"]] == "applied"


@contextlib.contextmanager
def _bind_mount(source: Path, target: Path):
    target.mkdir()
    p = subprocess.run(["mount", "--bind", str(source), str(target)], capture_output=True, text=True)
    if p.returncode != 0:
        pytest.skip(f"cannot bind-mount here (mount --bind: {p.stderr.strip() or p.returncode}); needs root")
    try:
        yield target
    finally:
        subprocess.run(["umount", str(target)], check=True)


async def test_the_same_folder_mounted_at_another_path_opens_the_same_review(cli, tmp_path):
    root = tmp_path / "app"
    expected = _made(root, cli)
    with _bind_mount(root, tmp_path / "mnt") as mnt:
        assert os.path.realpath(mnt) != os.path.realpath(root)  # (another path for the kernel too)
        _same_review(mnt, expected, cli)
        await _mcp_reads(mnt, expected, cli)
        _decide_there(mnt, expected)
        await _editor_reads(mnt, expected, cli)
    # Back at its own path: what was decided through the mount is there.
    states = {h["id"]: h for h in stet_json("status", "--all", cwd=root)["hunks"]}
    assert states[expected["ids"]["a5"]]["status"] == "applied" and states[expected["ids"]["a5"]]["inFile"] is True
    assert all(h["uri"].startswith(root.as_uri() + "/") for h in states.values())


async def test_a_symlinked_path_to_the_folder_opens_the_same_review(cli, tmp_path):
    root = tmp_path / "app"
    expected = _made(root, cli)
    link = tmp_path / "link"
    link.symlink_to(root, target_is_directory=True)
    _same_review(root, expected, cli)
    via = _view(stet_json("status", "--all", cwd=link), root)  # the workspace is the real folder
    assert via == _view(stet_json("status", "--all", cwd=root), root)
    _decide_there(link.resolve(), expected)
    s = Session(link, init_options={"db": cli.db(root)} if cli.pg else None)
    await s.start()
    try:
        hunks = await s.hunks()
        assert {h["id"] for h in hunks} >= {expected["ids"]["a5"]}
        assert all(h["uri"].startswith(root.as_uri() + "/") for h in hunks)
    finally:
        await s.stop()


async def test_a_multi_root_workspace_moved_whole_keeps_each_roots_hunks(cli, tmp_path):
    """Two folders of one window (the second stored by its index), moved together."""
    one, two = tmp_path / "ws" / "one", tmp_path / "ws" / "two"
    for folder in (one, two):
        folder.mkdir(parents=True)
        (folder / "x.txt").write_text("old\nkeep\n")
    # (a git repository: a PostgreSQL review knows a checkout that moved as one of its repository)
    make_repo(one)
    commit_all(one)
    init = {"db": cli.db(one)} if cli.pg else None
    s = Session(one, folders=[one, two], init_options=init)
    await s.start()
    res = await s.propose(
        "p", {uri(one / "x.txt"): [(rng(0, 0, 1, 0), "new\n")], uri(two / "x.txt"): [(rng(1, 0, 2, 0), "KEEP\n")]}
    )
    ids = {h["uri"].split("/")[-2]: h["id"] for h in res["hunks"]}
    await s.command("stet.accept", {"hunkIds": [ids["two"]]})
    await s.kill()
    await s.died()
    shutil.move(tmp_path / "ws", tmp_path / "moved")
    one, two = tmp_path / "moved" / "one", tmp_path / "moved" / "two"
    s = Session(one, folders=[one, two], init_options=init)
    await s.start()
    try:
        hunks = {h["id"]: h for h in await s.hunks()}
        assert hunks[ids["one"]]["uri"] == uri(one / "x.txt") and hunks[ids["one"]]["status"] == "pending"
        assert hunks[ids["two"]]["uri"] == uri(two / "x.txt") and hunks[ids["two"]]["status"] == "applied"
        assert hunks[ids["two"]]["inFile"] is True
        await s.command("stet.undo", {"hunkIds": [ids["two"]]})
        await s.command("stet.accept", {"hunkIds": [ids["one"]]})
        assert (two / "x.txt").read_text() == "old\nkeep\n" and (one / "x.txt").read_text() == "new\nkeep\n"
    finally:
        await s.stop()
    # The command line, opened in the first folder alone, reads the second's hunks where they are.
    cli_view = {h["id"]: h for h in stet_json("status", "--all", cwd=one)["hunks"]}
    assert cli_view[ids["two"]]["uri"] == uri(two / "x.txt") and cli_view[ids["two"]]["status"] == "pending"


def test_a_store_kept_elsewhere_reads_alike_from_every_folder_of_the_project(tmp_path):
    """`--db` outside the project: its paths are relative to the project's root (the git work tree)
    whichever folder of it a command runs in, and it moves with the project like any store."""
    root = make_repo(tmp_path / "app")
    (root / "sub").mkdir()
    (root / "sub" / "b.txt").write_text("b\n")
    (root / "a.py").write_text("a\n")
    commit_all(root)
    db = tmp_path / "kept" / "review.db"
    db.parent.mkdir(mode=0o700)
    diff = "--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-a\n+A\n--- a/sub/b.txt\n+++ b/sub/b.txt\n@@ -1 +1 @@\n-b\n+B\n"
    stet_json("--db", str(db), "propose", "--patch", "-", cwd=root / "sub", input=diff)
    top = {h["id"]: h["uri"] for h in stet_json("--db", str(db), "status", cwd=root)["hunks"]}
    below = {h["id"]: h["uri"] for h in stet_json("--db", str(db), "status", cwd=root / "sub")["hunks"]}
    assert top == below and set(top.values()) == {(root / "a.py").as_uri(), (root / "sub" / "b.txt").as_uri()}
    moved = tmp_path / "moved"
    root.rename(moved)
    (h,) = [i for i, u in top.items() if u.endswith("/a.py")]
    stet_json("--db", str(db), "accept", h, cwd=moved / "sub")
    assert (moved / "a.py").read_text() == "A\n"
