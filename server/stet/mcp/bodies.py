"""How much `stet mcp --http` holds of its requests' bodies: each at most `limits.HOOK` bytes
(413 before a byte is read when it says it is larger, as soon as it is when it did not say),
all of them together at most `BUDGET` bytes (a request waits for its share, at most `WAIT`
seconds, then 503), and each arriving at a pace a client on this machine keeps (`GRACE`
seconds plus one per MiB, then 408). A body is counted from its first byte until its answer is
sent: what a request parses and keeps of it is covered as well.

Without it, ten concurrent 60 MB hook requests took the server from 73 MB to 1.6 GB.
Behind the bearer token: a request without it is answered 401 before it gets here.
"""

from __future__ import annotations

import asyncio
from typing import Any

from .. import limits

# One request at the limit at a time, with small ones (a hook is a few KiB) beside it.
BUDGET = limits.HOOK + (4 << 20)
WAIT = 10.0  # seconds a request waits for its share (Claude Code waits 10 s for a hook's answer)
GRACE = 5.0  # seconds any body has to arrive, plus one second per MiB it carries
RATE = 1 << 20
SMALL = 1 << 20  # a share this small passes the large ones waiting, whenever it fits


class Refused(Exception):
    """A body not taken: the status and the one line to answer."""

    def __init__(self, status: int, line: str) -> None:
        super().__init__(line)
        self.status, self.line = status, line


def too_large() -> Refused:
    return Refused(413, f"stet: TooLarge: a request body is at most {limits.HOOK >> 20} MiB")


async def answer(send: Any, status: int, body: bytes, kind: bytes = b"application/json", **extra: bytes) -> None:
    headers = [(b"content-type", kind), (b"content-length", str(len(body)).encode())]
    headers += [(k.replace("_", "-").encode(), v) for k, v in extra.items()]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def refuse(send: Any, refused: Refused) -> None:
    extra = {"retry_after": b"1"} if refused.status == 503 else {}
    await answer(send, refused.status, refused.line.encode() + b"\n", b"text/plain", **extra)


class Budget:
    """Bytes held at once by every request together; a request takes its share and gives it
    back. Large shares are granted first come, first served; a small one (a hook event is a few
    KiB) whenever it fits, so that no large request, even one that stalls, holds the hooks up."""

    def __init__(self, total: int) -> None:
        self.total, self.used = total, 0
        self.queue: list[tuple[int, asyncio.Future[None]]] = []

    async def take(self, n: int) -> None:
        if self.used + n <= self.total and (n <= SMALL or not self.queue):
            self.used += n
            return
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.queue.append((n, turn))
        try:
            await turn
        except BaseException:
            if turn.done() and not turn.cancelled():
                self.give(n)  # granted as the wait ended: given back
            else:
                self.queue.remove((n, turn))
                self._grant()
            raise

    def give(self, n: int) -> None:
        self.used -= n
        self._grant()

    def _grant(self) -> None:
        while self.queue and self.used + self.queue[0][0] <= self.total:
            n, turn = self.queue.pop(0)
            self.used += n
            turn.set_result(None)
        for n, turn in [w for w in self.queue if w[0] <= SMALL]:
            if self.used + n <= self.total:
                self.queue.remove((n, turn))
                self.used += n
                turn.set_result(None)


def _declared(scope: Any) -> tuple[int | None, bool]:
    """(Content-Length, chunked) of a request; Refused(400) for a length that is not one."""
    length, chunked = None, False
    for name, value in scope.get("headers") or ():
        if name == b"content-length":
            if not value.strip().isdigit():
                raise Refused(400, "stet: the Content-Length is not a number")
            length = int(value)
        elif name == b"transfer-encoding" and b"chunked" in value.lower():
            chunked = True
    return length, chunked


class BodyBound:
    """ASGI middleware: every HTTP request's body bounded as the module says, then the app."""

    def __init__(self, app: Any, budget: Budget | None = None) -> None:
        self.app = app
        self.budget = budget or Budget(BUDGET)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> Any:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        try:
            length, chunked = _declared(scope)
            if length is not None and length > limits.HOOK:
                raise too_large()  # said before a byte of it is read
            share = length if length is not None else limits.HOOK if chunked else 0
            if share:
                try:
                    await asyncio.wait_for(self.budget.take(share), WAIT)
                except TimeoutError:
                    raise Refused(503, "stet: busy with other large requests; try again") from None
        except Refused as refused:
            return await refuse(send, refused)
        if not share:
            return await self.app(scope, receive, send)
        started = False

        async def sending(message: Any) -> None:
            nonlocal started
            started = True
            await send(message)

        try:
            await self.app(scope, _Paced(receive, share), sending)
        except Refused as refused:
            if not started:
                await refuse(send, refused)
        finally:
            self.budget.give(share)


class _Paced:
    """`receive` for one body: more than limits.HOOK bytes, or bytes coming slower than the
    module's pace, end it (Refused); once the body is whole, `receive` as it is."""

    def __init__(self, receive: Any, share: int) -> None:
        self.receive = receive
        self.got = 0
        self.whole = False
        self.deadline = asyncio.get_running_loop().time() + GRACE + share / RATE

    async def __call__(self) -> Any:
        if self.whole:
            return await self.receive()
        left = self.deadline - asyncio.get_running_loop().time()
        try:
            message = await asyncio.wait_for(self.receive(), max(left, 0.001))
        except TimeoutError:
            raise Refused(408, "stet: the request body did not arrive in time") from None
        if message.get("type") == "http.request":
            self.got += len(message.get("body", b""))
            if self.got > limits.HOOK:
                raise too_large()
            self.whole = not message.get("more_body")
        else:
            self.whole = True  # the client is gone
        return message
