"""A team on PostgreSQL, the rough edges: a server started while
PostgreSQL is down (a laptop that opens the editor before the VPN), `stet pull` into a checkout
that diverged, the README's least-rights role, and what is logged or said when the store cannot
be used. The tests that stop PostgreSQL or make roles use a cluster of their own
(support/pgcluster.py); the others a fresh database in the shared one (STET_TEST_PG)."""

from __future__ import annotations

import asyncio
import json
import os
import queue
import re
import socket
import threading
import time
from pathlib import Path

import psycopg
import pytest

from support.clitools import commit_all, git, make_repo, stet
from support.engines import Databases, cluster
from support.harness import Session, read, uri
from support.pgcluster import PrivateCluster
from support.rawlsp import RawServer
from support.workers import call, mcp_client

BASE = "".join(f"line {i}\n" for i in range(1, 11))
PATCH = "--- a/a.py\n+++ b/a.py\n@@ -2 +2 @@\n-line 2\n+LINE TWO\n@@ -8 +8 @@\n-line 8\n+LINE EIGHT\n"
README = Path(__file__).resolve().parents[2] / "README.md"


@pytest.fixture
def private():
    c = PrivateCluster()
    try:
        c.start()
        yield c
    finally:
        c.remove()  # stopped and gone, whatever the test did to it


@pytest.fixture
def shared():
    databases = Databases(cluster())
    try:
        yield databases
    finally:
        databases.drop()


def _database(c: PrivateCluster, name: str = "review") -> str:
    with psycopg.connect(c.admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return c.url(name)


class Notes:
    """Every notification a RawServer sent, kept in order, to wait for one or count them."""

    def __init__(self, server: RawServer):
        self.server = server
        self.seen: list[dict] = []

    def _drain(self, wait: float) -> None:
        try:
            self.seen.append(self.server.notes.get(timeout=wait))
        except queue.Empty:
            return
        while True:
            try:
                self.seen.append(self.server.notes.get_nowait())
            except queue.Empty:
                return

    def wait(self, method: str, test=lambda params: True, timeout: float = 30, after: int = 0) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            for note in self.seen[after:]:
                if note["method"] == method and test(note["params"]):
                    return note["params"]
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(
                    f"no {method} in {timeout} s; seen {[n['method'] for n in self.seen]}; {self.server.tail()}"
                )
            self._drain(min(left, 0.2))

    def of(self, method: str) -> list[dict]:
        self._drain(0)
        return [n["params"] for n in self.seen if n["method"] == method]


def _open(server: RawServer, path: Path, text: str) -> str:
    u = uri(path)
    server.notify(
        "textDocument/didOpen", {"textDocument": {"uri": u, "languageId": "python", "version": 1, "text": text}}
    )
    return u


def _initialize(server: RawServer, url: str) -> float:
    """initialize (with the store's url) and initialized; returns when initialize was answered."""
    root_uri = server.root.resolve().as_uri()
    server.call(
        "initialize",
        {
            "processId": None,
            "rootUri": root_uri,
            "workspaceFolders": [{"uri": root_uri, "name": "ws"}],
            "capabilities": {"workspace": {"workspaceEdit": {"documentChanges": True}, "applyEdit": True}},
            "initializationOptions": {"db": url},
        },
        timeout=60,
    )
    answered = time.monotonic()
    server.notify("initialized", {})
    return answered


# --- a server started while PostgreSQL is down ---------------------------------------


@pytest.mark.parametrize("trigger", ["a request", "itself"])
def test_a_server_started_while_postgresql_is_down_connects_once_it_is_back(private, tmp_path, trigger):
    """The editor opens before PostgreSQL can be reached: the server answers initialize, says
    once that the store cannot be used, keeps the documents the editor opens and edits
    meanwhile, and when PostgreSQL is back it connects (at the next request, or by itself),
    publishes the review at the buffers' positions (stet/restored again, diagnostics,
    hunksChanged) and follows other processes' commits."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.py").write_text(BASE)
    url = _database(private)
    proposed = stet("propose", "--patch", "-", "--id", "p1", "--json", cwd=ws, input=PATCH, env={"STET_DB": url})
    assert proposed.returncode == 0, proposed.stderr
    h1, h2 = [h["id"] for h in json.loads(proposed.stdout)["hunks"]]
    private.stop()
    server = RawServer(ws)
    notes = Notes(server)
    try:
        _initialize(server, url)
        first = notes.wait("stet/restored")
        assert "connects again by itself" in first["error"], first
        u = _open(server, ws / "a.py", BASE)
        # Typed while the store is away: a line above both hunks.
        server.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": u, "version": 2},
                "contentChanges": [
                    {
                        "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
                        "text": "# top\n",
                    }
                ],
            },
        )
        refused = server.request("stet/listHunks", {})
        assert refused["error"]["code"] == -32005, refused
        private.start()
        if trigger == "a request":
            answer = server.request("stet/listHunks", {}, timeout=60)
            assert "result" in answer, answer
            hunks = {h["id"]: h for h in answer["result"]["hunks"]}
            assert set(hunks) == {h1, h2}
            assert hunks[h1]["range"]["start"]["line"] == 2 and hunks[h2]["range"]["start"]["line"] == 8
        again = notes.wait("stet/restored", lambda p: "error" not in p, timeout=60)
        assert again["counts"]["pending"] == 2 and again["files"] == 1, again
        diagnostics = notes.wait(
            "textDocument/publishDiagnostics", lambda p: p["uri"] == u and len(p["diagnostics"]) == 2
        )
        assert sorted(d["range"]["start"]["line"] for d in diagnostics["diagnostics"]) == [2, 8]
        notes.wait("stet/hunksChanged", lambda p: p["uri"] == u and len(p["hunks"]) == 2)
        errors = [m for m in notes.of("window/showMessage") if m["type"] == 1]
        assert len(errors) == 1 and "cannot be used" in errors[0]["message"], errors  # told once
        # Live sync: another process's decision reaches the editor.
        mark = len(notes.seen)
        assert stet("reject", h2, cwd=ws, env={"STET_DB": url}).returncode == 0
        notes.wait(
            "stet/hunksChanged",
            lambda p: any(h["id"] == h2 and h["status"] == "rejected" for h in p["hunks"]),
            after=mark,
        )
        listed = server.call("stet/listHunks", {})
        assert {h["id"]: h["status"] for h in listed["hunks"]} == {h1: "pending", h2: "rejected"}
    finally:
        server.stop(timeout=30)


async def test_an_mcp_server_started_while_postgresql_is_down_serves_once_it_is_back(private, tmp_path):
    """`stet mcp` on a shared review, started before PostgreSQL can be reached: each tool says
    the store cannot be used (never a crash), and once PostgreSQL is back the next call works
    without restarting the agent's MCP server."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.py").write_text(BASE)
    url = _database(private)
    assert stet("propose", "--patch", "-", "--id", "p1", cwd=ws, input=PATCH, env={"STET_DB": url}).returncode == 0
    private.stop()
    async with mcp_client(ws, "--db", url) as mcp:
        error, text, _ = await call(mcp, "review_status")
        assert error and "StoreUnavailable" in text, text
        private.start()
        error, text, data = await call(mcp, "review_status")
        assert not error, text
        assert "2 pending" in text or (data and "pending" in json.dumps(data)), text
        error, text, _ = await call(mcp, "start_task", title="After the VPN", goal="works")
        assert not error, text


def test_a_server_whose_recovery_lost_postgresql_recovers_once_it_is_back(private, tmp_path):
    """PostgreSQL goes away after the server opened the review but before it recovered it (a
    pause at recovery's start widens that window): the editor is told once, and when
    PostgreSQL is back the next request recovers the review and is answered, stet/restored
    follows without error, and live sync runs."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.py").write_text(BASE)
    url = _database(private)
    proposed = stet("propose", "--patch", "-", "--id", "p1", "--json", cwd=ws, input=PATCH, env={"STET_DB": url})
    h1, h2 = [h["id"] for h in json.loads(proposed.stdout)["hunks"]]
    server = RawServer(ws, env={"STET_FAULT": "recover:start~1.5"})
    notes = Notes(server)
    try:
        _initialize(server, url)
        private.stop()  # (recovery is paused at its start meanwhile)
        first = notes.wait("stet/restored")
        assert "cannot be used" in first["error"], first
        assert server.request("stet/listHunks", {})["error"]["code"] == -32005
        private.start()
        answer = server.request("stet/listHunks", {}, timeout=60)
        assert {h["id"] for h in answer["result"]["hunks"]} == {h1, h2}, answer
        again = notes.wait("stet/restored", lambda p: "error" not in p, timeout=60)
        assert again["counts"]["pending"] == 2, again
        assert len([m for m in notes.of("window/showMessage") if m["type"] == 1]) == 1
        mark = len(notes.seen)
        assert stet("reject", h2, cwd=ws, env={"STET_DB": url}).returncode == 0
        notes.wait(
            "stet/hunksChanged",
            lambda p: any(h["id"] == h2 and h["status"] == "rejected" for h in p["hunks"]),
            after=mark,
        )
    finally:
        server.stop(timeout=30)


class _Silent:
    """A TCP port that accepts connections and never answers: PostgreSQL behind a VPN that is
    not up yet, as libpq sees it (it waits connect_timeout, 10 s by default)."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.accepted: list[float] = []
        self.conns: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted.append(time.monotonic())
            self.conns.append(conn)

    def close(self) -> None:
        self.sock.close()
        for conn in self.conns:
            conn.close()


def test_initialize_answers_at_once_while_postgresql_does_not(tmp_path):
    """initialize is not held by a connection attempt that hangs: the editor gets its answer
    within a few seconds of the attempt, not after libpq's 10 s, and is told once."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.py").write_text(BASE)
    silent = _Silent()
    server = RawServer(ws)
    notes = Notes(server)
    try:
        answered = _initialize(server, f"postgresql://stet@127.0.0.1:{silent.port}/review")
        assert silent.accepted, "the server did not try to connect before answering initialize"
        assert answered - silent.accepted[0] < 6, answered - silent.accepted[0]
        restored = notes.wait("stet/restored", timeout=60)
        assert "cannot be used" in restored["error"], restored
        assert len([m for m in notes.of("window/showMessage") if m["type"] == 1]) == 1
    finally:
        silent.close()  # the attempts in flight fail at once: the server exits without waiting
        server.stop(timeout=30)


# --- what is logged and said when the store cannot be used ---------------------------


def _stderr(server: RawServer) -> str:
    server.stderr.seek(0)
    return server.stderr.read().decode(errors="replace")


def test_postgresql_unavailable_is_logged_in_one_line_without_a_traceback(private, tmp_path):
    """PostgreSQL stops under a running server: the refused request, the save and the idle
    checkpoint that cannot be stored are each logged as one line (no traceback), and the
    refusal the client gets is one line too."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.py").write_text(BASE)
    url = _database(private)
    proposed = stet("propose", "--patch", "-", "--id", "p1", "--json", cwd=ws, input=PATCH, env={"STET_DB": url})
    h1 = json.loads(proposed.stdout)["hunks"][0]["id"]
    server = RawServer(ws)
    notes = Notes(server)
    try:
        _initialize(server, url)
        assert "error" not in notes.wait("stet/restored")
        u = _open(server, ws / "a.py", BASE)
        private.stop()
        refused = server.request(
            "workspace/executeCommand", {"command": "stet.accept", "arguments": [{"hunkIds": [h1]}]}
        )
        assert refused["error"]["code"] == -32005 and "\n" not in refused["error"]["message"], refused
        # A keystroke (its idle checkpoint cannot be stored), then a save (nor can that).
        server.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": u, "version": 2},
                "contentChanges": [
                    {
                        "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
                        "text": "# top\n",
                    }
                ],
            },
        )
        deadline = time.monotonic() + 30
        while "checkpoint" not in _stderr(server) and "background" not in _stderr(server):
            assert time.monotonic() < deadline, _stderr(server)
            time.sleep(0.2)
        server.notify("textDocument/didSave", {"textDocument": {"uri": u}})
        server.call("stet/listHunks", {})  # (answered from memory; the save was handled before it)
        deadline = time.monotonic() + 30
        while _stderr(server).count("cannot be used") < 3:
            assert time.monotonic() < deadline, _stderr(server)
            time.sleep(0.2)
        log = _stderr(server)
        assert "Traceback" not in log, log
        for line in log.splitlines():
            assert line.startswith("stet "), log  # every record is one line
    finally:
        private.start()
        server.stop(timeout=30)


def test_the_refusal_of_another_repositorys_checkout_names_no_other_checkout(shared, tmp_path):
    """A checkout of another repository (another git history; or no history and no
    STET_REPOSITORY) is refused saying what it needs, without the paths and host names of the
    checkouts already attached (other people's machines)."""
    origin = make_repo(tmp_path / "origin")
    (origin / "a.py").write_text(BASE)
    commit_all(origin)
    dev = tmp_path / "dev"
    git("clone", "-q", str(origin), str(dev), cwd=tmp_path)
    env = {"STET_DB": shared.new()}
    assert stet("propose", "--patch", "-", "--id", "p1", cwd=dev, input=PATCH, env=env).returncode == 0
    other = make_repo(tmp_path / "other")
    (other / "a.py").write_text(BASE)
    commit_all(other, "another history")
    plain = [tmp_path / "plain1", tmp_path / "plain2"]
    for root in plain:
        root.mkdir()
        (root / "a.py").write_text(BASE)
    plain_env = {"STET_DB": shared.new()}
    assert stet("status", cwd=plain[0], env=plain_env).returncode == 0
    for root, attached, e in ((other, dev, env), (plain[1], plain[0], plain_env)):
        refused = stet("status", cwd=root, env=e)
        text = refused.stdout + refused.stderr
        assert refused.returncode != 0 and "cannot attach" in text and "Nothing was changed" in text, text
        for secret in (str(attached), os.path.realpath(attached)):
            assert secret not in text, (secret, text)
        assert not re.search(rf"\b{re.escape(socket.gethostname())}\b", text), text
        # What is needed instead: a checkout of the same repository, STET_REPOSITORY, or another database.
        assert "clone of the same repository" in text and "STET_REPOSITORY" in text and "database" in text, text
    assert (other / "a.py").read_text() == BASE


# --- the README's least-rights role ---------------------------------------------------


def _readme_sql() -> list[list[str]]:
    """The statements of each ```sql block of the README's "Teams and remote agents" section,
    as written there (comments dropped)."""
    text = README.read_text()
    section = text[text.index("## Teams and remote agents") :]
    section = section[: section.index("\n## ", 1)]
    blocks = re.findall(r"```sql\n(.*?)```", section, re.S)
    out = []
    for block in blocks:
        lines = [line.split("--", 1)[0].strip() for line in block.splitlines()]
        out.append([s.strip() for s in " ".join(lines).split(";") if s.strip()])
    return out


async def test_the_readmes_least_rights_role_reviews_end_to_end(private, tmp_path):
    """The README's statements, run as they are written: the owner makes the tables once, then
    the role with only the granted rights proposes, decides (a real server), follows another
    process's decision live, shows the status, pulls and resumes."""
    setup, grants = _readme_sql()
    with psycopg.connect(private.admin, autocommit=True) as conn:
        for statement in setup:
            conn.execute(statement)
    origin = make_repo(tmp_path / "origin")
    (origin / "a.py").write_text(BASE)
    commit_all(origin)
    dev, agent = tmp_path / "dev", tmp_path / "agent"
    for clone in (dev, agent):
        git("clone", "-q", str(origin), str(clone), cwd=tmp_path)
    made = stet("init", cwd=dev, env={"STET_DB": private.url("stet_shop", "stet_owner")})
    assert made.returncode == 0, made.stderr
    with psycopg.connect(private.url("stet_shop"), autocommit=True) as conn:
        for statement in grants:
            conn.execute(statement)
    url = private.url("stet_shop", "stet")
    with psycopg.connect(url, autocommit=True) as conn:  # the role really has no more than that
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("CREATE TABLE mine (i int)")
    env = {"STET_DB": url}
    assert stet("task", "start", "Shout", "--goal", "capitals", "--id", "t1", cwd=agent, env=env).returncode == 0
    proposed = stet("propose", "--patch", "-", "--task", "t1", "--id", "p1", "--json", cwd=agent, input=PATCH, env=env)
    assert proposed.returncode == 0, proposed.stderr
    h1, h2 = [h["id"] for h in json.loads(proposed.stdout)["hunks"]]
    session = Session(dev, init_options={"db": url})
    restored = await session.start()
    assert "error" not in restored, restored
    try:
        out = await session.command("stet.accept", {"hunkIds": [h1]})
        assert out["hunks"][0]["status"] == "applied"
        assert read(dev / "a.py") == BASE.replace("line 2\n", "LINE TWO\n")
        since = len(session.changed)
        assert stet("reject", h2, "--feedback", "keep line 8", cwd=agent, env=env).returncode == 0
        for _ in range(200):
            if any(h["id"] == h2 and h["status"] == "rejected" for c in session.changed[since:] for h in c["hunks"]):
                break
            await asyncio.sleep(0.05)
        else:
            raise AssertionError("the editor never saw the agent's reject")
    finally:
        await session.stop()
    status = json.loads(stet("status", "--all", "--json", cwd=agent, env=env).stdout)
    assert {h["id"]: (h["status"], h["inFile"]) for h in status["hunks"]} == {
        h1: ("applied", False),
        h2: ("rejected", None),
    }
    pulled = stet("pull", cwd=agent, env=env)
    assert pulled.returncode == 0, pulled.stderr
    assert read(agent / "a.py") == BASE.replace("line 2\n", "LINE TWO\n")
    resumed = stet("resume", "t1", cwd=agent, env=env)
    assert resumed.returncode == 0 and "keep line 8" in resumed.stdout, resumed


# --- `stet pull` into a checkout that diverged ----------------------------------------

B_BASE = "alpha\nbeta\ngamma\n"
TWO_FILES = PATCH + "--- a/b.py\n+++ b/b.py\n@@ -2 +2 @@\n-beta\n+BETA\n"


def test_pull_lands_what_it_can_and_names_each_hunk_that_cannot(shared, tmp_path):
    """The developer accepted three hunks in two files; the agent's checkout changed the lines
    of one of them. `stet pull` there lands the other two (once each), names the one that
    cannot land with advice about the checkout, exits 1 for it alone and leaves the review as
    the developer decided it; once the checkout is put back, the last one lands too."""
    origin = make_repo(tmp_path / "origin")
    (origin / "a.py").write_text(BASE)
    (origin / "b.py").write_text(B_BASE)
    commit_all(origin)
    dev, agent = tmp_path / "dev", tmp_path / "agent"
    for clone in (dev, agent):
        git("clone", "-q", str(origin), str(clone), cwd=tmp_path)
    env = {"STET_DB": shared.new()}
    proposed = stet("propose", "--patch", "-", "--id", "p1", "--json", cwd=agent, input=TWO_FILES, env=env)
    assert proposed.returncode == 0, proposed.stderr
    by_line = {
        (h["uri"].rsplit("/", 1)[1], h["range"]["start"]["line"]): h["id"] for h in json.loads(proposed.stdout)["hunks"]
    }
    two, eight, beta = by_line[("a.py", 1)], by_line[("a.py", 7)], by_line[("b.py", 1)]
    assert stet("accept", "--proposal", "p1", cwd=dev, env=env).returncode == 0
    decided = BASE.replace("line 2\n", "LINE TWO\n").replace("line 8\n", "LINE EIGHT\n")
    assert read(dev / "a.py") == decided
    # The agent's checkout changed line 8 meanwhile.
    mine = BASE.replace("line 8\n", "line 8, mine\n")
    (agent / "a.py").write_text(mine)
    # Then the same request again (its first answer, nothing done), then a new pull (nothing
    # more lands, nothing twice).
    for request, landed in (["pull-1"], {two, beta}), (["pull-1"], {two, beta}), ([], set()):
        pulled = stet("pull", "--json", *(["--request-id", *request] if request else []), cwd=agent, env=env)
        assert pulled.returncode == 1, (pulled.stdout, pulled.stderr)
        out = json.loads(pulled.stdout)
        assert [n["id"] for n in out["notPulled"]] == [eight], out
        assert {h["id"] for h in out["hunks"]} == landed, out
        assert read(agent / "a.py") == mine.replace("line 2\n", "LINE TWO\n")
        assert read(agent / "b.py") == B_BASE.replace("beta\n", "BETA\n")
        # Named, with what to do about this checkout - not about the developer's decision.
        assert eight in pulled.stderr and "a.py" in pulled.stderr and "this checkout" in pulled.stderr, pulled.stderr
        assert "undo" not in pulled.stderr.lower(), pulled.stderr
    said = stet("pull", cwd=agent, env=env)
    assert said.returncode == 1 and eight in said.stderr and "stash" in said.stderr, said.stderr
    # The review is as the developer decided it, in every checkout.
    hunks = json.loads(stet("status", "--all", "--json", cwd=dev, env=env).stdout)["hunks"]
    assert {h["id"]: (h["status"], h["inFile"]) for h in hunks} == {
        two: ("applied", True),
        eight: ("applied", True),
        beta: ("applied", True),
    }
    # The agent's checkout is put back where the hunk expects it: the last one lands, once.
    (agent / "a.py").write_text(BASE.replace("line 2\n", "LINE TWO\n"))
    final = stet("pull", cwd=agent, env=env)
    assert final.returncode == 0, final.stderr
    assert read(agent / "a.py") == decided
    again = stet("pull", cwd=agent, env=env)
    assert again.returncode == 0 and "nothing to pull" in again.stderr
    assert read(agent / "a.py") == decided and read(agent / "b.py") == B_BASE.replace("beta\n", "BETA\n")
