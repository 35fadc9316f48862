"""Real agent workers for tests: a scripted MCP client process (`agent_worker.py`) and the
`stet` command line, each a separate process, so killing one is a real SIGKILL."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from contextlib import asynccontextmanager
from pathlib import Path

from mcp import ClientSession, StdioServerParameters, stdio_client

HERE = Path(__file__).parent


class Worker:
    """One agent worker process and the `stet mcp` server it started (same process group)."""

    def __init__(self, root: Path, plan: list, env: dict | None = None, stay: bool = True):
        args = [sys.executable, str(HERE / "agent_worker.py"), str(root), json.dumps(plan)]
        self.proc = subprocess.Popen(
            args + (["--stay"] if stay else []),
            cwd=root,
            env={**os.environ, **(env or {})},
            stdout=subprocess.PIPE,
            text=True,
            start_new_session=True,  # its own process group: one kill ends it and its MCP server
        )
        self.results: list[dict] = []

    async def run(self, timeout: float = 60) -> list[dict]:
        """Read its answers until it is done (or died); returns them."""

        def read() -> None:
            for line in self.proc.stdout:
                line = line.strip()
                if line == "DONE":
                    return
                self.results.append(json.loads(line))
                if "died" in self.results[-1]:
                    return

        await asyncio.wait_for(asyncio.to_thread(read), timeout)
        return self.results

    def kill(self) -> None:
        """SIGKILL the worker and its MCP server, as a crash would."""
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)

    def result(self, tool: str, nth: int = 0) -> dict:
        return [r for r in self.results if r["tool"] == tool][nth]


def stet(root: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """Run the `stet` command line in `root`, as an agent or a developer would."""
    return subprocess.run(
        [sys.executable, "-m", "stet", *args],
        cwd=root,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=60,
    )


def stet_json(root: Path, *args: str) -> dict:
    done = stet(root, *args, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@asynccontextmanager
async def mcp_client(root: Path, *args: str, env: dict | None = None):
    """The official MCP client talking to a fresh `stet mcp` over stdio."""
    # This process's environment (PYTHONPATH: the code under test), as clitools.stet passes it.
    full_env = {k: v for k, v in os.environ.items() if k not in ("STET_DB", "STET_FAULT")}
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "stet", "mcp", *args], cwd=str(root), env={**full_env, **(env or {})}
    )
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            yield session


async def call(session: ClientSession, tool: str, **arguments) -> tuple[bool, str, dict | None]:
    result = await session.call_tool(tool, arguments)
    text = "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")
    return bool(result.is_error), text, result.structured_content
