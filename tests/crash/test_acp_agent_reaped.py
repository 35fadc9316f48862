"""`stet acp` killed, however it dies, takes the agent with it: the agent's process group (it and
whatever its launcher started) ends although the agent ignores its stdin's end (as Claude Code's
and Codex's ACP adapters do) and even SIGTERM; Zed stops an agent server with SIGKILL to the
process it started, i.e. stet, and an editor may kill stet's whole process group. A normal end
leaves nothing of this behind and kills nothing. Linux: processes are read from /proc."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from pathlib import Path

import pytest

from support.acp_raw import AGENT, Client, new_session, pid_in, prompt, start

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads processes from /proc")

REAPER = "stet-acp-reaper"  # the reaper's name ($0 of its sh), with the agent's group in its arguments

# Launchers as npx and Codex's ACP adapter's node script are: the agent their child, not exec'd.
SH = ["sh", "-c", '"$@"; exit $?', "launcher"]
PYTHON = [sys.executable, "-c", "import subprocess, sys; sys.exit(subprocess.run(sys.argv[1:]).returncode)"]


def _stat(pid: str) -> list[str] | None:
    """A process's /proc stat fields after its name: state, ppid, pgrp, session, ..."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2 :].split()


def group(pgid: int) -> list[int]:
    """The processes of the group `pgid` still running (a zombie has ended)."""
    out = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        fields = _stat(pid)
        if fields is not None and int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            out.append(int(pid))
    return out


def reapers(pgid: int | None = None, parent: int | None = None) -> list[int]:
    """The running reapers (of the group `pgid`, children of `parent`, as given)."""
    out = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        fields = _stat(pid)
        if REAPER.encode() not in argv or fields is None or fields[0] in ("Z", "X"):
            continue
        if (pgid is None or str(pgid).encode() in argv) and (parent is None or int(fields[1]) == parent):
            out.append(int(pid))
    return out


async def until(check, within: float, what: str) -> None:
    deadline = time.monotonic() + within
    while not check():
        assert time.monotonic() < deadline, what
        await asyncio.sleep(0.05)


@pytest.fixture
def leftovers():
    """Groups to kill at the end, whatever the test found (a failing test leaves nothing running)."""
    groups: list[int] = []
    yield groups
    for pgid in groups:
        for pid in group(pgid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


async def _agent_mid_prompt(
    tmp_path: Path, launcher: list[str], leftovers: list[int], *extra: str, **kw
) -> tuple[Client, int]:
    """stet acp with a stubborn agent behind `launcher`, mid-prompt; the agent's process group."""
    pidfile = tmp_path / "agent.pid"
    client = await start(tmp_path, "--pidfile", str(pidfile), "--ignore-eof", *extra, agent=[*launcher, *AGENT], **kw)
    session = await new_session(client, tmp_path)
    await prompt(client, session, "slow:120")
    pgid = os.getpgid(pid_in(pidfile))
    leftovers.append(pgid)
    assert pgid != os.getpgid(client.proc.pid) and pid_in(pidfile) in group(pgid)
    await until(lambda: reapers(pgid, parent=client.proc.pid), 10, "no reaper watches the agent")
    (reaper,) = reapers(pgid)
    assert os.getsid(reaper) == reaper  # a session of its own: what stops stet's group misses it
    return client, pgid


async def test_stet_killed_ends_the_agents_whole_group(tmp_path, leftovers):
    client, pgid = await _agent_mid_prompt(tmp_path, SH, leftovers)
    client.proc.kill()  # as Zed stops an agent server
    assert await client.exited() == -signal.SIGKILL
    await until(lambda: not group(pgid), 30, "the agent was left running after stet was killed")
    await until(lambda: not reapers(pgid), 10, "the reaper was left running")


@pytest.mark.parametrize("launcher", [SH, PYTHON], ids=["sh-launcher", "python-launcher"])
async def test_stet_killed_ends_an_agent_that_ignores_sigterm_after_the_grace(tmp_path, leftovers, launcher):
    client, pgid = await _agent_mid_prompt(tmp_path, launcher, leftovers, "--ignore-term")
    client.proc.kill()
    assert await client.exited() == -signal.SIGKILL
    await until(lambda: not group(pgid), 30, "the agent was left running after stet was killed")
    await until(lambda: not reapers(pgid), 10, "the reaper was left running")


async def test_the_editor_killing_stets_whole_group_still_ends_the_agent(tmp_path, leftovers):
    client, pgid = await _agent_mid_prompt(tmp_path, SH, leftovers, own_group=True)
    os.killpg(client.proc.pid, signal.SIGKILL)
    assert await client.exited() == -signal.SIGKILL
    await until(lambda: not group(pgid), 30, "the agent was left running after stet's group was killed")
    await until(lambda: not reapers(pgid), 10, "the reaper was left running")


async def test_a_normal_end_leaves_no_reaper_and_kills_nothing(tmp_path, leftovers):
    """The agent ends by itself at its stdin's end: stet exits with its code 0, no reaper is left,
    and what the agent left running in its group (a detached helper) is not killed by one."""
    pidfile, helper = tmp_path / "agent.pid", tmp_path / "helper.pid"
    launcher = ["sh", "-c", f'sleep 300 </dev/null >/dev/null 2>&1 & echo $! >"{helper}"; "$@"; exit $?', "launcher"]
    client = await start(tmp_path, "--pidfile", str(pidfile), agent=[*launcher, *AGENT])
    await new_session(client, tmp_path)
    pgid = os.getpgid(pid_in(pidfile))
    leftovers.append(pgid)
    await until(lambda: reapers(pgid, parent=client.proc.pid), 10, "no reaper watches the agent")
    await client.close()
    assert await client.exit_code() == 0  # the agent's own: it ended by itself
    assert reapers(pgid) == []  # stet waited for its reaper
    assert group(pgid) == [pid_in(helper)]  # nothing was killed


async def test_an_agent_that_cannot_start_gets_no_reaper(tmp_path):
    client = await start(tmp_path, agent=[str(tmp_path / "no-such-agent")])
    assert client.proc.stderr is not None
    while b"cannot start the agent" not in (line := await asyncio.wait_for(client.proc.stderr.readline(), 30)):
        assert line, "stet did not say it cannot start the agent"
    assert reapers(parent=client.proc.pid) == []  # stet still runs, waiting for the editor's request
    rid = await client.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    assert "no-such-agent" in (await client.answer_of(rid))["error"]["message"]
    await client.close()
    assert await client.exit_code() == 127
