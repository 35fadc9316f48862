"""Every answer true in every process: a process that keeps the review in memory - the
resident, a language server, `stet mcp`, `stet watch` - answers with what any other process
wrote, including hunks that only moved (an accept above them, a file changed and judged
elsewhere), never with the picture it loaded before.

Each pairing of a writer (a command in its own process, the resident, another language server,
another `stet mcp`) with a long-lived reader (the resident, a language server, `stet mcp`,
`stet watch`) on each engine: the reader loads the review, the writer moves hunk H2 from line
42 to 44, then the reader is asked where H2 is (those that list hunks) and proposes, in H2's
task, a change at line 42: a reader that still sees H2 there marks it superseded."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from support import clitools
from support.clitools import commit_all, make_repo, stet
from support.harness import Session, rng, uri, write
from support.residents import ON, calls, resident_pid, stop, wait_for
from support.workers import call, mcp_client

BASE = "".join(f"line {i}\n" for i in range(1, 61))
TASK = "t-moved"
# H1 turns line 5 into three lines (two more below it); H2 changes line 42.
PATCH = (
    "--- a/a.txt\n+++ b/a.txt\n@@ -5 +5,3 @@\n-line 5\n+LINE FIVE\n+five b\n+five c\n"
    "@@ -42 +42 @@\n-line 42\n+LINE 42\n"
)
WAS, NOW = 41, 43  # H2's 0-based line before and after the move
# What the reader proposes in H2's task: line 42 as it is after the move ("line 40").
LATER = "--- a/a.txt\n+++ b/a.txt\n@@ -42 +42 @@\n-line 40\n+LINE 40\n"
OWN = {"STET_RESIDENT": "off"}


class Kind:
    """One kind of process, started before the move and stopped after. A reader has `line`
    (None: it lists nothing) and `propose`; a writer has `move` (two lines more above H2). A
    reader's live sync and rounds are slowed to an hour: what it answers, it looked up before
    answering, not by luck of its timers."""

    name = ""

    def __init__(self, root: Path, db: str, reader: bool):
        self.root, self.db = root, db
        self.still = {"STET_SYNC_INTERVAL": "3600", "STET_WATCH_INTERVAL": "3600"} if reader else {}

    async def start(self) -> None:
        pass

    async def line(self, hid: str) -> int | None:
        return None

    async def stop(self) -> None:
        pass


def _line_of(hunks: list[dict], hid: str) -> int:
    (h,) = [h for h in hunks if h["id"] == hid]
    return h["range"]["start"]["line"]


class Command(Kind):
    """`stet` in its own process (STET_RESIDENT=off): it accepts H1."""

    name = "command"

    async def move(self, h1: str, h2: str) -> None:
        p = await asyncio.to_thread(stet, "accept", h1, cwd=self.root, env=OWN)
        assert p.returncode == 0, p.stderr


class Resident(Kind):
    name = "resident"

    async def start(self) -> None:
        assert (await asyncio.to_thread(stet, "status", cwd=self.root, env=ON)).returncode == 0
        await asyncio.to_thread(wait_for, lambda: resident_pid(self.root), "the resident to answer")

    async def _answered(self, *args: str, input: str | None = None) -> str:
        before = calls(self.root)
        p = await asyncio.to_thread(stet, *args, cwd=self.root, input=input, env=ON)
        assert p.returncode == 0, p.stderr
        assert calls(self.root) == before + 1, "the resident answered the call"
        return p.stdout

    async def line(self, hid: str) -> int | None:
        return _line_of(json.loads(await self._answered("status", "--all", "--json"))["hunks"], hid)

    async def propose(self, proposal_id: str) -> None:
        await self._answered("propose", "--patch", "-", "--task", TASK, "--id", proposal_id, input=LATER)

    async def move(self, h1: str, h2: str) -> None:
        await self._answered("accept", h1)

    async def stop(self) -> None:
        await asyncio.to_thread(stop, self.root)


class Server(Kind):
    """A language server: an editor window, a.txt not open in it."""

    name = "server"

    async def start(self) -> None:
        self.session = Session(self.root, env={**OWN, **self.still}, init_options={"db": self.db})
        await self.session.start()

    async def line(self, hid: str) -> int | None:
        return _line_of(await self.session.hunks(), hid)

    async def propose(self, proposal_id: str) -> None:
        edit = {uri(self.root / "a.txt"): [(rng(WAS, 0, WAS + 1, 0), "LINE 40\n")]}
        await self.session.propose(proposal_id, edit, taskId=TASK)

    async def move(self, h1: str, h2: str) -> None:
        out = await self.session.command("stet.accept", {"hunkIds": [h1]})
        assert out["hunks"][0]["status"] == "applied"

    async def stop(self) -> None:
        await self.session.stop()


class Mcp(Kind):
    name = "mcp"

    async def start(self) -> None:
        self._client = mcp_client(self.root, env={"STET_DB": self.db, **OWN})
        self.mcp = await self._client.__aenter__()

    async def _call(self, tool: str, **arguments) -> dict:
        error, text, data = await call(self.mcp, tool, **arguments)
        assert not error, text
        return data

    async def line(self, hid: str) -> int | None:
        data = await self._call("review_status", task_id=TASK)
        return _line_of([h for hunks in data["hunks"].values() for h in hunks], hid)

    async def propose(self, proposal_id: str) -> None:
        await self._call("propose_patch", task_id=TASK, patch=LATER, proposal_id=proposal_id)

    async def move(self, h1: str, h2: str) -> None:
        """MCP decides nothing: what it writes is what it judges. Another tool puts two lines
        at the top of a.txt, and this process looks (review_status): it records where H2 went."""
        path = self.root / "a.txt"
        write(path, "top 1\ntop 2\n" + path.read_text())
        assert await self.line(h2) == NOW

    async def stop(self) -> None:
        await self._client.__aexit__(None, None, None)


class Watch(Kind):
    """`stet watch`: it lists nothing; it proposes what is dropped into the inbox."""

    name = "watch"

    async def start(self) -> None:
        env = {**os.environ, **clitools.ENGINE_ENV, **OWN, **self.still}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "stet", "watch"], cwd=self.root, env=env, stderr=subprocess.PIPE, text=True
        )
        said = ""
        while "watching" not in said:
            said = await asyncio.to_thread(self.proc.stderr.readline)
            assert said, "stet watch ended before it was watching"

    async def propose(self, proposal_id: str) -> None:
        inbox = self.root / ".stet" / "inbox"
        write(inbox / f"{proposal_id}.meta.json", json.dumps({"taskId": TASK}))
        write(inbox / f"{proposal_id}.patch", LATER)
        done, failed = inbox / "done" / f"{proposal_id}.patch", inbox / "failed" / f"{proposal_id}.error"
        await asyncio.to_thread(wait_for, lambda: done.exists() or failed.exists(), "the inbox file to be taken")
        assert done.exists(), failed.read_text()

    async def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        _, err = await asyncio.to_thread(self.proc.communicate, timeout=30)
        assert self.proc.returncode == 0, err


WRITERS = {k.name: k for k in (Command, Resident, Server, Mcp)}
READERS = {k.name: k for k in (Resident, Server, Mcp, Watch)}
# Every writer with every reader, but the resident reading its own write (one process).
PAIRS = [(w, r) for w in WRITERS for r in READERS if (w, r) != ("resident", "resident")]


def _truth(root: Path) -> dict[str, dict]:
    """Every hunk as a command in its own process reads it."""
    p = stet("status", "--all", "--json", cwd=root, env=OWN)
    assert p.returncode == 0, p.stderr
    return {h["id"]: h for h in json.loads(p.stdout)["hunks"]}


@pytest.fixture
def repo(tmp_path, engine):
    root = make_repo(tmp_path / "repo")
    write(root / "a.txt", BASE)
    commit_all(root)
    clitools.ENGINE_ENV.clear()
    if engine.pg:
        clitools.ENGINE_ENV["STET_DB"] = engine.db(root)
    try:
        yield root
        stop(root)
    finally:
        clitools.ENGINE_ENV.clear()


@pytest.mark.parametrize(("writer", "reader"), PAIRS, ids=[f"{w}-writes-{r}-answers" for w, r in PAIRS])
async def test_a_long_lived_process_answers_with_what_another_wrote(repo, engine, writer, reader):
    assert stet("init", cwd=repo, env=OWN).returncode == 0  # the inbox, for `stet watch`
    p = stet("propose", "--patch", "-", "--task", TASK, "--id", "p1", "--json", cwd=repo, input=PATCH, env=OWN)
    assert p.returncode == 0, p.stderr
    h1, h2 = [h["id"] for h in json.loads(p.stdout)["hunks"]]
    db = engine.db(repo)
    r, w = READERS[reader](repo, db, reader=True), WRITERS[writer](repo, db, reader=False)
    await r.start()
    try:
        await w.start()
        try:
            assert await r.line(h2) in (WAS, None), "the reader loaded H2 where it was proposed"
            await w.move(h1, h2)
            assert _truth(repo)[h2]["range"]["start"]["line"] == NOW, "a command in its own process sees the move"
            assert await r.line(h2) in (NOW, None), f"the {reader} answers with where the {writer} left H2"
            await r.propose("p2")
            got = _truth(repo)
            assert got[h2]["status"] == "pending", f"the {reader} took H2 for the line it was at before the move"
            assert [h["status"] for h in got.values() if h["proposalId"] == "p2"] == ["pending"]
        finally:
            await w.stop()
    finally:
        await r.stop()


async def test_a_server_answers_a_request_with_what_was_committed_before_it(repo, engine):
    """A decision that changes no file: only the log says it. The server's live sync sleeps for
    an hour; its answers must follow the log all the same."""
    p = stet("propose", "--patch", "-", "--task", TASK, "--id", "p1", "--json", cwd=repo, input=PATCH, env=OWN)
    h1, h2 = [h["id"] for h in json.loads(p.stdout)["hunks"]]
    server = Server(repo, engine.db(repo), reader=True)
    await server.start()
    try:
        assert stet("reject", h2, "--feedback", "not this", cwd=repo, env=OWN).returncode == 0
        listed = {h["id"]: h for h in await server.session.hunks()}
        assert (listed[h2]["status"], listed[h2]["feedback"], listed[h1]["status"]) == (
            "rejected",
            "not this",
            "pending",
        )
        other = "--- a/a.txt\n+++ b/a.txt\n@@ -20 +20 @@\n-line 20\n+LINE 20\n"
        p = stet("propose", "--patch", "-", "--id", "p2", cwd=repo, input=other, env=OWN)
        assert p.returncode == 0, p.stderr
        assert {h["proposalId"] for h in await server.session.hunks()} == {"p1", "p2"}
    finally:
        await server.stop()


async def test_a_proposal_reads_where_another_process_left_a_hunk(repo, engine):
    """The review of a long-lived process, not yet caught up with another process's accept that
    moved H2: a proposal of H2's task at H2's old line does not take H2 for replaced (the rows
    read under the write lock are newer than its memory)."""
    from stet.agents import intake
    from stet.review import open_review

    p = stet("propose", "--patch", "-", "--task", TASK, "--id", "p1", "--json", cwd=repo, input=PATCH, env=OWN)
    h1, h2 = [h["id"] for h in json.loads(p.stdout)["hunks"]]
    review = (await open_review([str(repo)], engine.db(repo))).review
    try:
        assert review.hunks[h2].line == WAS
        assert stet("accept", h1, cwd=repo, env=OWN).returncode == 0  # H2 now at NOW
        answer, _ = await intake.propose_patch(review, LATER, task_id=TASK, proposal_id="p2")
        assert answer.hunks[0].status.value == "pending"
        assert review.hunks[h2].status.value == "pending" and review.hunks[h2].line == NOW
    finally:
        await review.close()
    assert _truth(repo)[h2]["status"] == "pending"
