"""A conductor of ACP proxy chains written from the protocol as the ACP Rust SDK's conductor
(`agent-client-protocol-conductor`, src/conductor.rs) speaks it, to run `stet acp --proxy` as a real
conductor would: `python acp_conductor.py agent "PROXY CMD" ... "AGENT CMD"` (each component one
shell-parsed string, the last the agent), the client on this process's stdin and stdout.

What it does, as the Rust conductor does:
- the components start at the client's first `initialize`; a proxy is initialised with
  `_proxy/initialize` (initialize's params), the agent with `initialize`;
- the client's messages go to the first component plain; a proxy's `_proxy/successor` request or
  notification (params `{method, params}`) is unwrapped and sent to the next component (an
  `initialize` inside becomes `_proxy/initialize` when that component is a proxy; `_proxy/initialize`
  from a proxy is refused); the answer goes back as a plain response to the envelope's id;
- a component's other messages go to its predecessor: to the client plain, to a proxy wrapped in a
  `_proxy/successor` request or notification, whose plain response is the inner answer;
- every connection has its own request ids (the conductor's, from 1), mapped back on the way out.

`--old` speaks the form before December 2025 instead (sacp-conductor then, @thinkwell/conductor
0.5.7): a proxy gets `initialize` with `_meta.proxy: true` and must answer with `_meta.proxy: true`,
and the envelope is `_proxy/successor/request` / `_proxy/successor/notification`.

Every line each component and the client send is appended to $ACP_CONDUCTOR_LOG (one JSON object a
line: `{"from": NAME, "to": NAME, "line": ...}`) when set, so a test can see the wire."""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

JSON = dict[str, Any]


class Link:
    """One connection: a component's process, or the client on our stdio."""

    def __init__(self, name: str, reader: asyncio.StreamReader, write) -> None:
        self.name = name
        self.reader = reader
        self._write = write
        self.next_id = 0
        # our id on this link -> (link to answer, its id, how to answer)
        self.pending: dict[Any, tuple[Link, Any, str]] = {}

    def new_id(self) -> int:
        self.next_id += 1
        return self.next_id

    def send(self, body: JSON) -> None:
        line = json.dumps(body, separators=(",", ":"))
        log(self.name, line, to=True)
        self._write((line + "\n").encode())


def log(name: str, line: str, to: bool) -> None:
    path = os.environ.get("ACP_CONDUCTOR_LOG")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps({"to" if to else "from": name, "line": line}) + "\n")


class Conductor:
    def __init__(self, commands: list[str], old: bool) -> None:
        self.commands = commands
        self.old = old
        self.request = "_proxy/successor/request" if old else "_proxy/successor"
        self.notification = "_proxy/successor/notification" if old else "_proxy/successor"
        self.chain: list[Link] = []  # proxies, then the agent
        self.procs: list[asyncio.subprocess.Process] = []
        self.client: Link
        self.done = asyncio.Event()

    async def run(self) -> int:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=1 << 30)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        out = sys.stdout.buffer

        def write_client(data: bytes) -> None:
            out.write(data)
            out.flush()

        self.client = Link("client", reader, write_client)
        pump = asyncio.create_task(self.pump(self.client, -1))
        await self.done.wait()
        pump.cancel()
        for p in self.procs:
            if p.returncode is None:
                p.stdin.close()  # type: ignore[union-attr]
        for p in self.procs:
            try:
                await asyncio.wait_for(p.wait(), 10)
            except TimeoutError:
                p.kill()
        return 0

    async def start(self) -> None:
        for n, command in enumerate(self.commands):
            p = await asyncio.create_subprocess_exec(
                *shlex.split(command), stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, limit=1 << 30
            )
            self.procs.append(p)
            name = f"proxy{n}" if n < len(self.commands) - 1 else "agent"
            link = Link(name, p.stdout, p.stdin.write)  # type: ignore[arg-type,union-attr]
            self.chain.append(link)
            asyncio.create_task(self.pump(link, n))

    def is_proxy(self, index: int) -> bool:
        return index < len(self.chain) - 1

    async def pump(self, link: Link, index: int) -> None:
        while True:
            line = await link.reader.readline()
            if not line:  # the client left, or a component ended: the chain ends
                self.done.set()
                return
            log(link.name, line.decode(errors="replace").rstrip("\n"), to=False)
            try:
                body = json.loads(line)
            except ValueError:
                continue
            if not isinstance(body, dict):
                continue
            if link is self.client and not self.chain:
                await self.start()
            self.route(link, index, body)

    def forward_request(self, to: Link, method: str, params: Any, answer: Link, answer_id: Any, how: str) -> None:
        out_id = to.new_id()
        to.pending[out_id] = (answer, answer_id, how)
        to.send({"jsonrpc": "2.0", "id": out_id, "method": method, "params": params})

    def to_component(self, index: int, body: JSON, answer: Link, answer_id: Any) -> None:
        """A message travelling towards the agent, arriving at chain[index]."""
        target = self.chain[index]
        method, params = body["method"], body.get("params")
        how = "plain"
        if method == "initialize" and self.is_proxy(index):
            if self.old:
                params = dict(params or {}, _meta={**((params or {}).get("_meta") or {}), "proxy": True})
                how = "check-proxy"
            else:
                method = "_proxy/initialize"
        elif method == "initialize" and self.old:  # the agent gets no proxy flag
            meta = {k: v for k, v in ((params or {}).get("_meta") or {}).items() if k != "proxy"}
            params = dict(params or {}, _meta=meta)
        if "id" in body:
            self.forward_request(target, method, params, answer, answer_id, how)
        else:
            target.send({"jsonrpc": "2.0", "method": method, "params": params})

    def to_predecessor(self, index: int, body: JSON, answer: Link) -> None:
        """A message from chain[index] travelling towards the client."""
        if index == 0:
            if "id" in body:
                self.forward_request(self.client, body["method"], body.get("params"), answer, body["id"], "plain")
            else:
                self.client.send({"jsonrpc": "2.0", "method": body["method"], "params": body.get("params")})
            return
        proxy = self.chain[index - 1]
        inner = {"method": body["method"], "params": body.get("params")}
        if "id" in body:
            self.forward_request(proxy, self.request, inner, answer, body["id"], "plain")
        else:
            proxy.send({"jsonrpc": "2.0", "method": self.notification, "params": inner})

    def route(self, link: Link, index: int, body: JSON) -> None:
        if "method" not in body:  # a response to one of ours on this link
            answer, answer_id, how = link.pending.pop(body.get("id"), (None, None, ""))
            if answer is None:
                return
            reply: JSON = {"jsonrpc": "2.0", "id": answer_id}
            if "error" in body:
                reply["error"] = body["error"]
            elif how == "check-proxy" and not ((body.get("result") or {}).get("_meta") or {}).get("proxy"):
                reply["error"] = {"code": -32600, "message": "Proxy component did not accept proxy capability"}
            else:
                reply["result"] = body.get("result")
            answer.send(reply)
            return
        method = body["method"]
        if link is self.client:
            self.to_component(0, body, self.client, body.get("id"))
            return
        if method in (self.request, self.notification) and self.is_proxy(index):
            inner = body.get("params") or {}
            inner_body: JSON = {"method": inner.get("method"), "params": inner.get("params")}
            if inner_body["method"] == "_proxy/initialize":
                if "id" in body:
                    link.send({"jsonrpc": "2.0", "id": body["id"], "error": {"code": -32600, "message": "invalid"}})
                return
            if "id" in body:
                inner_body["id"] = body["id"]
            self.to_component(index + 1, inner_body, link, body.get("id"))
            return
        self.to_predecessor(index, body, link)


# A real conductor that installs here (npm): @thinkwell/conductor, a TypeScript conductor of the
# protocol's earlier form (the Rust conductor is not on a registry this machine reaches).
THINKWELL = ("@thinkwell/conductor", "0.5.7")
RUNNER = Path(__file__).with_name("acp_thinkwell.mjs")


def thinkwell(timeout: float = 600) -> list[str]:
    """The command that runs @thinkwell/conductor (`+ [PROXY..., AGENT]`), installing it into the test
    agents' cache when missing; raises agents_install.Unavailable (no node or npm, no registry)."""
    from support import agents_install

    package, version = THINKWELL
    target = agents_install.cache_root() / f"{package.replace('/', '+')}@{version}"
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        raise agents_install.Unavailable(f"node and npm are needed to install {package}@{version}")
    entry = target / "node_modules" / package / "dist" / "index.js"
    if not ((target / agents_install.DONE).exists() and entry.exists()):
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(target.parent / f".{target.name}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not ((target / agents_install.DONE).exists() and entry.exists()):
                agents_install._install(npm, package, version, target, timeout)
    return [node, str(RUNNER), str(target)]


def main(argv: list[str]) -> int:
    old = "--old" in argv
    argv = [a for a in argv if a != "--old"]
    if not argv or argv[0] != "agent" or len(argv) < 2:
        print("usage: acp_conductor.py [--old] agent PROXY... AGENT", file=sys.stderr)
        return 2
    return asyncio.run(Conductor(argv[1:], old).run())


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
