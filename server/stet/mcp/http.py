"""`stet mcp --http HOST:PORT`: the same MCP server over the SDK's streamable HTTP transport, for
agents on other machines (a container, a VM, a cloud sandbox).

Every request must carry `Authorization: Bearer <token>`; the token is made on first use
and kept in `.stet/mcp-token` (mode 0600; see workspace/own.py for what is refused there). A
request without it, or with another, is answered 401 before it reaches MCP: nothing is read
or stored. This module imports the MCP SDK only to serve: the token is written first. It listens on 127.0.0.1
unless told otherwise; the tools, their answers and their idempotency are those of stdio
(one review, opened once for the process, serves every session).

The same server answers Claude Code's HTTP hooks (`stet integrate claude-code --http`) at
`POST /hooks/claude-code`, behind the same token: `HookRoute`. Every request's body is bounded
in size, pace and, all requests together, in memory (bodies.py); at most CONNECTIONS at once.
"""

from __future__ import annotations

import hmac
import json
import logging
import os
import sys
import time

from .. import limits
from ..errors import InvalidParams
from ..workspace import own

TYPE_CHECKING = False  # light imports only until the token is written
if TYPE_CHECKING:
    from typing import Any

log = logging.getLogger(__name__)

TOKEN_FILE = "mcp-token"
HOOK_PATH = "/hooks/claude-code"  # (agents.setups.claude_code.HOOK_PATH: the same route, kept light here)
CONNECTIONS = 100  # connections and requests at once; more are answered 503 by uvicorn


def token_path(db_path: str) -> str:
    return os.path.join(own.home_path(os.path.dirname(db_path)), TOKEN_FILE)


def ensure_token(db_path: str) -> str:
    """The bearer token, made (random, 0600, written whole before it appears) the first time.
    A token file Stet did not make (a symlink, a hard link, another user's, readable by
    others) is refused and left as it is (NotStets)."""
    return own.secret(os.path.dirname(db_path), TOKEN_FILE, own.new_token, lambda token: len(token) >= 32)


def parse_address(text: str) -> tuple[str, int]:
    """`PORT`, `:PORT`, `HOST:PORT` or `[IPv6]:PORT`; the host defaults to 127.0.0.1."""
    host, sep, port = text.rpartition(":")
    if not sep:
        host, port = "", text
    host = host.strip("[]") or "127.0.0.1"
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise InvalidParams(f"--http takes HOST:PORT (e.g. 127.0.0.1:8765), not {text!r}")
    return host, int(port)


class BearerGuard:
    """ASGI middleware: an HTTP request without the right bearer token is answered 401 here."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()
        self.refused_hooks = 0  # said on stderr: Claude Code shows a refused hook to nobody
        self.said_at: float | None = None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> Any:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)  # the lifespan: opens the review once
        given = dict(scope.get("headers") or ()).get(b"authorization", b"")
        if hmac.compare_digest(given, self.expected):
            return await self.app(scope, receive, send)
        if scope.get("path") == HOOK_PATH:
            self._say_refused_hook()
        body = json.dumps(
            {"error": "unauthorized", "message": "missing or wrong bearer token (see .stet/mcp-token)"}
        ).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"www-authenticate", b'Bearer realm="stet"'),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})

    def _say_refused_hook(self) -> None:
        """A hook refused for its token captured nothing; Claude Code counts a 401 as a
        non-blocking error and goes on. Said in the terminal the server runs in, at most once a
        minute (anyone may send these), with how many since."""
        self.refused_hooks += 1
        now = time.monotonic()
        if self.said_at is not None and now - self.said_at < 60:
            return
        self.said_at = now
        count, self.refused_hooks = self.refused_hooks, 0
        print(
            f"stet mcp: refused {count} Claude Code hook call(s) without the right bearer token (401): nothing "
            f"of them was captured. Start Claude Code with STET_TOKEN set: export STET_TOKEN=$(stet mcp --print-token)",
            file=sys.stderr,
            flush=True,
        )


class HookRoute:
    """ASGI: `POST /hooks/claude-code` answers Claude Code's HTTP hooks as `stet hook claude-code`
    answers its command hooks (the same `handle`, the same JSON; an empty body when there is
    nothing to say), over the review this process holds, brought up to date with the store
    first. Anything unexpected is a 500 with one line, which Claude Code treats as a
    non-blocking error: the agent goes on. Every other request goes to MCP."""

    def __init__(self, app: Any, state: Any, roots: list[str], db_path: str) -> None:
        self.app, self.state, self.roots, self.db_path = app, state, roots, db_path
        self.root = os.path.realpath(roots[0])

    async def __call__(self, scope: Any, receive: Any, send: Any) -> Any:
        if scope["type"] != "http" or scope.get("path") != HOOK_PATH:
            return await self.app(scope, receive, send)
        from .bodies import Refused, answer, refuse

        if scope.get("method") != "POST":
            return await answer(send, 405, b"stet: POST the hook's JSON here\n", b"text/plain")
        query = (scope.get("query_string") or b"").split(b"&")
        restore, request_changes = b"restore=1" in query, b"request_changes=1" in query
        try:
            raw = await self._body(receive)
        except Refused as refused:  # too large, too slow: its own status (bodies.py)
            return await refuse(send, refused)
        if raw is None:
            return  # the client left before its request was whole: nothing to answer
        departure = _Departure(receive)
        try:
            try:
                body, undo = await self._answer(raw, restore, request_changes)
            except Exception as exc:  # any failure: said on one line, never blocking the agent
                name = getattr(exc, "name", type(exc).__name__)
                line = " ".join(str(getattr(exc, "message", exc)).split())
                text = f"stet hook: {name}: {line}"[:1000].encode() + b"\n"
                return await answer(send, 500, text, b"text/plain")
            if await departure.seen():  # the client left: uvicorn would drop the answer silently
                await self._untell(undo)  # told again at the next prompt
                return
            try:
                await answer(send, 200, body)
            except Exception:  # never delivered: told again at the next prompt
                await self._untell(undo)
                raise
        finally:
            departure.stop()

    async def _body(self, receive: Any) -> bytearray | None:
        from .bodies import too_large

        raw = bytearray()
        while True:
            message = await receive()
            if message.get("type") != "http.request":
                return None
            raw += message.get("body", b"")
            if len(raw) > limits.HOOK:  # the same bound as a hook's stdin (BodyBound stops it sooner)
                raise too_large()
            if not message.get("more_body"):
                return raw

    async def _answer(self, raw: bytearray, restore: bool, request_changes: bool) -> tuple[bytes, list[Any]]:
        from ..agents.hooks import handle

        try:
            payload = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise InvalidParams(f"the hook input is not JSON ({exc})") from None
        review = await self.state.current()  # PostgreSQL unreachable at start: tried again now
        cwd = payload.get("cwd") if isinstance(payload, dict) else None
        if isinstance(cwd, str) and not _inside(os.path.realpath(cwd), self.root):
            return b"", []  # a session in another folder: not this review's
        # What other processes decided since, and the files as they are: the answer says what
        # the same hook in its own process (or through the resident) would.
        lag = (await review.up_to_date()).lag
        if lag:
            log.warning("%s", lag)
        undo: list[Any] = []
        out = await handle(review, "claude-code", payload, keep=not restore, undo=undo, request_changes=request_changes)
        return (json.dumps(out).encode() if out else b""), undo

    async def _untell(self, undo: list[Any]) -> None:
        from ..agents.hooks import loop

        if undo and self.state.review is not None:
            await loop(self.state.review, "claude-code").untell(undo)


class _Departure:
    """Watches, once a request is read, for its client leaving before the answer is sent: an
    answer to a client that left is dropped by uvicorn without a word, so what it told must be
    taken back (the command path's closed stdout, here)."""

    def __init__(self, receive: Any) -> None:
        import asyncio

        self.left = False
        self.task = asyncio.ensure_future(self._watch(receive))

    async def _watch(self, receive: Any) -> None:
        import asyncio

        while True:
            message = await receive()  # the server's own wait: it wakes when the client leaves
            if message.get("type") == "http.disconnect":
                self.left = True
                return
            await asyncio.sleep(0.01)

    async def seen(self) -> bool:
        import asyncio

        for _ in range(3):  # a departure the server has noticed reaches the watch
            await asyncio.sleep(0)
        return self.left

    def stop(self) -> None:
        self.task.cancel()


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def serve_http(
    db_path: str, roots: list[str], address: str, agent: str | None = None, token_beside: str | None = None
) -> None:
    host, port = parse_address(address)
    token_beside = token_beside or db_path
    token = ensure_token(token_beside)  # first: an agent waiting for it need not wait for the imports

    import uvicorn

    from .bodies import BodyBound
    from .server import _State, build

    logging.basicConfig(level=logging.WARNING, format="stet mcp %(levelname)s: %(message)s")
    state = _State()
    server = build(db_path, roots, agent, state)
    mcp = server.streamable_http_app(host=host)
    app = BearerGuard(BodyBound(HookRoute(mcp, state, roots, db_path)), token)
    shown = f"[{host}]" if ":" in host else host
    print(
        f"stet mcp: serving http://{shown}:{port}/mcp for {roots[0]}; bearer token in {token_path(token_beside)}",
        file=sys.stderr,
        flush=True,
    )
    try:
        uvicorn.run(app, host=host, port=port, log_level="warning", lifespan="on", limit_concurrency=CONNECTIONS)
    finally:
        if state.review is not None:
            state.review.stop_now()
