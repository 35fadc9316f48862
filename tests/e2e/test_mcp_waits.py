"""Every `wait_for_decisions` caught the review up with the store every 0.25 s
(100 waits: a quarter of a core). They now wait together on the store's change signal: one look
for all of them, and each still answers as soon as the developer decided in another process.

The real `stet mcp` over stdio, this checkout's code (PYTHONPATH passed on), on each engine
(SQLite: `data_version`; PostgreSQL: LISTEN/NOTIFY); its CPU time read from /proc while 100
calls wait."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

from support.workers import call, mcp_client, stet_json

WAITS = 100
WINDOW = 10.0  # seconds of waiting measured
CPU_SHARE = 0.05  # of one core, at most, for all the waits together (0.25 before)


def _server_pid() -> int:
    """The `stet mcp` this test process started."""
    me = str(os.getpid())
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if stat.rsplit(") ", 1)[1].split()[1] == me and b"mcp" in cmdline and b"stet" in cmdline:
            return int(entry.name)
    raise AssertionError("no `stet mcp` child found")


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


async def test_a_hundred_waits_share_one_look_and_all_answer_the_decision(ws, engine, monkeypatch):
    if engine.pg:  # the server and the developer's command line both find it through STET_DB
        monkeypatch.setenv("STET_DB", engine.db(ws))
    async with mcp_client(ws, "--agent", "claude", env=dict(os.environ)) as mcp:
        _, _, data = await call(mcp, "start_task", title="Shout", goal="upper-case b.txt")
        edits = [{"path": "b.txt", "old_text": "beta\n", "new_text": "BETA\n"}]
        _, _, data = await call(mcp, "propose_edits", task_id=data["task"]["id"], edits=edits, proposal_id="p-w")
        (hunk,) = data["hunks"]
        pid = _server_pid()
        waits = [
            asyncio.ensure_future(call(mcp, "wait_for_decisions", proposal_id="p-w", timeout_seconds=300))
            for _ in range(WAITS)
        ]
        await asyncio.sleep(5)  # the calls arrive and start waiting (a warm-up, not a condition)
        assert not any(w.done() for w in waits)
        cpu, wall = _cpu_seconds(pid), time.monotonic()
        await asyncio.sleep(WINDOW)
        share = (_cpu_seconds(pid) - cpu) / (time.monotonic() - wall)
        print(f"{WAITS} waits: {share:.1%} of a core")
        assert not any(w.done() for w in waits), "nothing was decided yet"
        assert share < CPU_SHARE, f"{WAITS} waits took {share:.1%} of a core"

        decided = time.monotonic()
        await asyncio.to_thread(stet_json, ws, "reject", hunk["id"], "--feedback", "keep beta")
        answers = await asyncio.wait_for(asyncio.gather(*waits), 120)
        print(f"all {WAITS} answered {time.monotonic() - decided:.2f} s after the reject was made")
        for error, text, data in answers:
            assert not error and not data["timedOut"], text
            assert [(h["status"], h["feedback"]) for h in data["hunks"]] == [("rejected", "keep beta")]
