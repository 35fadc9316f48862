"""What only the PostgreSQL engine has to prove: writers serialised so lsns commit in order,
the server restarted or gone mid-review (StoreUnavailable, nothing acknowledged that is not
committed, reconnection by itself), credentials never shown. Needs STET_TEST_PG (and, for
the restart, STET_PG_DIR: the cluster's folder, as .ci/run sets it)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException

from stet.domain.effect_outcome import Action
from stet.errors import StoreUnavailable
from stet.store import open_store
from stet.store.errors import ConstraintError
from stet.store.pgurl import mask, shown
from support.clitools import commit_all, git, make_repo, stet
from support.engines import Databases, Engine, cluster
from support.harness import Session, read, uri

BASE = "".join(f"line {i}\n" for i in range(1, 11))
PATCH = "--- a/a.py\n+++ b/a.py\n@@ -2 +2 @@\n-line 2\n+LINE TWO\n@@ -8 +8 @@\n-line 8\n+LINE EIGHT\n"
CLUSTER = Path(__file__).resolve().parents[2] / ".ci" / "pg-cluster"


@pytest.fixture
def pg():
    databases = Databases(cluster())
    try:
        yield Engine("postgresql", databases)
    finally:
        databases.drop()


def _cluster_dir() -> str:
    folder = os.environ.get("STET_PG_DIR")
    if not folder:
        if os.environ.get("STET_REQUIRE_PG") == "1":
            pytest.fail("STET_REQUIRE_PG=1 but STET_PG_DIR (the cluster's folder, to restart it) is unset")
        pytest.skip("restarting PostgreSQL needs STET_PG_DIR, the folder of .ci/pg-cluster's cluster")
    return folder


def _cluster(action: str) -> None:
    subprocess.run([str(CLUSTER), action, _cluster_dir()], check=True, capture_output=True, timeout=120)


async def test_concurrent_writers_commit_lsns_in_order_and_a_follower_misses_none(engine, tmp_path):
    """Two stores (two processes' worth) write at once: every lsn is used once, they are
    dense, and a follower reading "lsn > N" as it goes sees them in order without a gap.
    On both engines (the contract is the same)."""
    url = engine.db(tmp_path)
    a = (await open_store(url, home=str(tmp_path / "a"))).store
    b = (await open_store(url, home=str(tmp_path / "b"))).store
    follower = (await open_store(url, home=str(tmp_path / "f"))).store
    seen: list[int] = []
    stop = asyncio.Event()

    async def writer(store, name: str) -> None:
        for i in range(40):
            async with store.write() as tx:
                lsn = await tx.log(f"{name}-{i}", "test", {"i": i})
                await tx.add_effect(lsn, "file:///x", Action.APPLY, [])

    async def follow() -> None:
        last = 0
        while not stop.is_set():
            ops = await follower.ops(last)
            seen.extend(o.lsn for o in ops)
            if ops:
                last = ops[-1].lsn
            await asyncio.sleep(0)
        seen.extend(o.lsn for o in await follower.ops(last))

    try:
        task = asyncio.ensure_future(follow())
        await asyncio.gather(writer(a, "a"), writer(b, "b"))
        stop.set()
        await task
        assert seen == list(range(1, 81))
        async with a.write() as tx:  # an op id is used once, whichever process asks
            await tx.log("c-0", "test", {})
        with pytest.raises(ConstraintError):  # the same error on both engines
            async with b.write() as tx:
                await tx.log("c-0", "test", {})
        assert await follower.last_lsn() == 81
    finally:
        for s in (a, b, follower):
            await s.close()


async def test_migrations_run_once_and_a_foreign_database_is_left_alone(pg, tmp_path):
    url = pg.db(tmp_path)
    first, second = await asyncio.gather(
        open_store(url, home=str(tmp_path / "1")), open_store(url, home=str(tmp_path / "2"))
    )
    await first.store.close()
    await second.store.close()
    other = pg._databases.new()
    import psycopg

    with psycopg.connect(other, autocommit=True) as conn:
        conn.execute("CREATE TABLE invoices (id int)")
    with pytest.raises(StoreUnavailable, match="invoices"):
        await open_store(other, home=str(tmp_path / "3"))


def test_passwords_are_masked_in_every_message(tmp_path):
    url = "postgresql://stet:s3cr3t-pw@127.0.0.1:1/review?sslmode=disable&connect_timeout=2"
    assert "s3cr3t-pw" not in shown(url) and "stet:***@127.0.0.1:1" in shown(url)
    assert mask("password=abc&x=1 postgres://u:abc@h/d", None) == "password=***&x=1 postgres://u:***@h/d"
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.py").write_text(BASE)
    for args in (["status"], ["propose", "--patch", "-"], ["doctor"]):
        done = stet(*args, cwd=ws, input=PATCH, env={"STET_DB": url})
        assert done.returncode != 0 and "cannot be used" in done.stderr, done
        assert "s3cr3t-pw" not in done.stdout + done.stderr, done
    also = "postgresql://stet@127.0.0.1:1/review?password=hunter22&connect_timeout=2"
    done = stet("status", cwd=ws, env={"STET_DB": also})
    assert done.returncode != 0 and "hunter22" not in done.stdout + done.stderr, done


async def test_postgresql_restarted_mid_review_nothing_unknown_is_acknowledged_and_it_reconnects(pg, ws):
    _cluster_dir()
    url = pg.db(ws)
    session = Session(ws, init_options={"db": url})
    await session.start()
    try:
        proposed = stet("propose", "--patch", "-", "--id", "p1", "--json", cwd=ws, input=PATCH, env={"STET_DB": url})
        assert proposed.returncode == 0, proposed.stderr
        h1, h2 = [h["id"] for h in json.loads(proposed.stdout)["hunks"]]
        before = read(ws / "a.py")
        _cluster("stop")
        try:
            with pytest.raises(JsonRpcException) as err:
                await session.command("stet.accept", {"hunkIds": [h1]})
            assert err.value.code == -32005 and "PostgreSQL" in str(err.value), err.value
            assert read(ws / "a.py") == before  # nothing written for a decision not committed
        finally:
            _cluster("start")
        # The next request reconnects by itself; the refused accept left no trace.
        out = await session.command("stet.accept", {"hunkIds": [h1]})
        assert out["hunks"][0]["status"] == "applied"
        assert read(ws / "a.py") == before.replace("line 2\n", "LINE TWO\n")
        # Live sync came back too: the CLI's reject reaches the editor.
        since = len(session.changed)
        assert stet("reject", h2, cwd=ws, env={"STET_DB": url}).returncode == 0
        for _ in range(100):
            if any(h["id"] == h2 and h["status"] == "rejected" for c in session.changed[since:] for h in c["hunks"]):
                break
            await asyncio.sleep(0.05)
        else:
            raise AssertionError("the editor never saw the CLI's reject after the restart")
        status = json.loads(stet("status", "--all", "--json", cwd=ws, env={"STET_DB": url}).stdout)
        assert {h["id"]: h["status"] for h in status["hunks"]} == {h1: "applied", h2: "rejected"}
    finally:
        await session.stop()


def test_a_checkout_not_known_to_be_of_the_same_repository_is_refused(pg, tmp_path):
    """Checkouts attach to a review only when they are of one repository (the same git history,
    or the same STET_REPOSITORY): two folders without either are refused, nothing changed, and
    the first goes on; with STET_REPOSITORY set alike, the second attaches."""
    first, second = tmp_path / "first", tmp_path / "second"
    for root in (first, second):
        root.mkdir()
        (root / "a.py").write_text(BASE)
    url = pg.db(first)
    env = {"STET_DB": url}
    assert stet("propose", "--patch", "-", "--id", "p1", cwd=first, input=PATCH, env=env).returncode == 0
    refused = stet("propose", "--patch", "-", "--id", "p2", cwd=second, input=PATCH, env=env)
    assert refused.returncode != 0 and "cannot attach" in refused.stderr, refused
    assert str(first) not in refused.stderr and "Nothing was changed" in refused.stderr  # (another's path)
    assert stet("status", cwd=second, env=env).returncode != 0
    status = json.loads(stet("status", "--all", "--json", cwd=first, env=env).stdout)
    assert {h["proposalId"] for h in status["hunks"]} == {"p1"}
    assert (second / "a.py").read_text() == BASE
    named = {**env, "STET_REPOSITORY": "acme/shop"}
    assert stet("status", cwd=second, env=named).returncode != 0  # the review's repository has no name
    url2 = pg._databases.new()
    for root in (first, second):
        done = stet("status", cwd=root, env={"STET_DB": url2, "STET_REPOSITORY": "acme/shop"})
        assert done.returncode == 0, done.stderr


async def test_two_checkouts_agent_proposes_developer_decides_agent_pulls_and_resumes(pg, tmp_path):
    """Two clones of one repository (two machines' worth) meet in one review: the agent's
    checkout proposes, the developer's editor (a real server) accepts and rejects, PostgreSQL is
    restarted in the middle, the agent's checkout pulls the accepted hunk (once) and resumes."""
    _cluster_dir()
    origin = make_repo(tmp_path / "origin")
    (origin / "a.py").write_text(BASE)
    commit_all(origin)
    dev, agent = tmp_path / "dev", tmp_path / "agent"
    for clone in (dev, agent):
        git("clone", "-q", str(origin), str(clone), cwd=tmp_path)
    url = pg.db(dev)
    env = {"STET_DB": url}
    assert stet("task", "start", "Shout", "--goal", "capitals", "--id", "t1", cwd=agent, env=env).returncode == 0
    proposed = stet("propose", "--patch", "-", "--task", "t1", "--id", "p1", "--json", cwd=agent, input=PATCH, env=env)
    assert proposed.returncode == 0, proposed.stderr
    h1, h2 = [h["id"] for h in json.loads(proposed.stdout)["hunks"]]
    session = Session(dev, init_options={"db": url})
    await session.start()
    try:
        # The developer's editor shows the agent's hunks at the developer's own paths.
        assert {h["uri"] for h in await session.hunks()} == {uri(dev / "a.py")}
        out = await session.command("stet.accept", {"hunkIds": [h1]})
        assert out["hunks"][0]["status"] == "applied" and out["hunks"][0]["inFile"] is True
        assert read(dev / "a.py") == BASE.replace("line 2\n", "LINE TWO\n")
        assert read(agent / "a.py") == BASE  # landed in the checkout that decided, not elsewhere
        _cluster("stop")
        try:
            with pytest.raises(JsonRpcException) as err:
                await session.command("stet.reject", {"hunkIds": [h2], "feedback": "keep line 8"})
            assert err.value.code == -32005
        finally:
            _cluster("start")
        out = await session.command("stet.reject", {"hunkIds": [h2], "feedback": "keep line 8"})
        assert out["hunks"][0]["status"] == "rejected"
    finally:
        await session.stop()

    def states(root):
        hunks = json.loads(stet("status", "--all", "--json", cwd=root, env=env).stdout)["hunks"]
        return {h["id"]: (h["status"], h["inFile"], h["uri"]) for h in hunks}

    # Status is the review's; whether the text is in the files, each checkout's own.
    assert states(agent) == {h1: ("applied", False, uri(agent / "a.py")), h2: ("rejected", None, uri(agent / "a.py"))}
    assert states(dev)[h1] == ("applied", True, uri(dev / "a.py"))
    pulled = stet("pull", "--json", cwd=agent, env=env)
    assert pulled.returncode == 0, pulled.stderr
    assert read(agent / "a.py") == BASE.replace("line 2\n", "LINE TWO\n")
    again = stet("pull", cwd=agent, env=env)
    assert again.returncode == 0 and "nothing to pull" in again.stderr
    assert read(agent / "a.py") == BASE.replace("line 2\n", "LINE TWO\n")  # once
    assert read(dev / "a.py") == BASE.replace("line 2\n", "LINE TWO\n")  # the pull wrote only its own checkout
    assert states(agent)[h1] == ("applied", True, uri(agent / "a.py"))
    assert states(dev)[h1] == ("applied", True, uri(dev / "a.py"))
    resumed = stet("resume", "t1", cwd=agent, env=env)
    assert resumed.returncode == 0, resumed.stderr
    assert "keep line 8" in resumed.stdout, resumed.stdout
    # Another repository's checkout may not attach to this review.
    other = make_repo(tmp_path / "other")
    (other / "a.py").write_text(BASE)
    commit_all(other, "another history")
    refused = stet("status", cwd=other, env=env)
    assert refused.returncode != 0 and "cannot attach" in refused.stderr, refused


async def test_two_developers_decide_the_same_hunk_from_two_checkouts(pg, tmp_path):
    """Two developers' editors (real servers) in two clones accept the same hunk at once: one
    final state in the review, the edit written by the checkout that decided it, once; `stet
    pull` brings it into the other, once. A reject racing an accept ends as one of the two,
    the same in both checkouts."""
    origin = make_repo(tmp_path / "origin")
    (origin / "a.py").write_text(BASE)
    commit_all(origin)
    one, two = tmp_path / "one", tmp_path / "two"
    for clone in (one, two):
        git("clone", "-q", str(origin), str(clone), cwd=tmp_path)
    url = pg.db(one)
    proposed = stet("propose", "--patch", "-", "--id", "p1", "--json", cwd=one, input=PATCH, env={"STET_DB": url})
    h1, h2 = [h["id"] for h in json.loads(proposed.stdout)["hunks"]]
    a, b = Session(one, init_options={"db": url}), Session(two, init_options={"db": url})
    await asyncio.gather(a.start(), b.start())
    try:
        answers = await asyncio.gather(
            a.command("stet.accept", {"hunkIds": [h1]}),
            b.command("stet.accept", {"hunkIds": [h1]}),
            return_exceptions=True,
        )
        for answer in answers:  # (one decided it; the other's answer may show it still on its way)
            assert not isinstance(answer, BaseException), answers
            assert answer["hunks"][0]["status"] in ("accepted", "applied"), answers
        racing = await asyncio.gather(
            a.command("stet.accept", {"hunkIds": [h2]}),
            b.command("stet.reject", {"hunkIds": [h2]}),
            return_exceptions=True,
        )
        for answer in racing:  # one wins; the other is a Conflict or sees the winner's state
            assert not isinstance(answer, BaseException) or getattr(answer, "code", None) == -32002, racing
        # Each editor shows inFile as its own checkout's file has it (the loser's: false, until a pull).
        for session, root in ((a, one), (b, two)):
            for _ in range(100):
                (h,) = [h for h in await session.hunks() if h["id"] == h1]
                if h["status"] == "applied" and h["inFile"] == ("LINE TWO" in read(root / "a.py")):
                    break
                await asyncio.sleep(0.02)
            else:
                raise AssertionError((root.name, h, read(root / "a.py")))
    finally:
        await asyncio.gather(a.stop(), b.stop())
    for root in (one, two):
        pulled = stet("pull", "--json", cwd=root, env={"STET_DB": url})
        assert pulled.returncode == 0, pulled.stderr
    final = {}
    for root in (one, two):
        hunks = json.loads(stet("status", "--all", "--json", cwd=root, env={"STET_DB": url}).stdout)["hunks"]
        final[root] = {h["id"]: h["status"] for h in hunks}
        assert all(h["inFile"] in (True, None) for h in hunks), [
            (root.name, h["id"], h["status"], h["inFile"]) for h in hunks
        ]
    assert final[one] == final[two] and final[one][h1] == "applied", final
    want = BASE.replace("line 2\n", "LINE TWO\n")
    if final[one][h2] == "applied":
        want = want.replace("line 8\n", "LINE EIGHT\n")
    assert read(one / "a.py") == want and read(two / "a.py") == want  # each edit once in each checkout


def test_init_with_a_shared_store_makes_a_git_ignored_stet_folder_and_no_local_database(pg, tmp_path):
    """`STET_DB=postgresql://... stet init` in a clone: the checkout's own things go in .stet/
    (inbox, lock), which git ignores as it does for an SQLite store; no .stet/stet.db is made."""
    root = make_repo(tmp_path / "clone")
    (root / "a.py").write_text(BASE)
    commit_all(root)
    env = {"STET_DB": pg.db(root)}
    done = stet("init", cwd=root, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().startswith("postgresql://")
    assert (root / ".stet" / ".gitignore").read_text() == "*\n" and (root / ".stet" / "inbox").is_dir()
    assert not (root / ".stet" / "stet.db").exists()
    assert git("status", "--porcelain", "--ignored=no", cwd=root) == ""
    assert stet("propose", "--patch", "-", "--id", "p1", cwd=root, input=PATCH, env=env).returncode == 0
    assert git("status", "--porcelain", "--ignored=no", cwd=root) == ""
