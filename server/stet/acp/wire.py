"""ACP's stdio transport: JSON-RPC messages, one per line, UTF-8, over asyncio streams.

Lines are read as bytes and kept as read (their `\\n` or `\\r\\n` end included), so what is passed
on is exactly what came. A line longer than LINE_BOUND is not held whole: it comes in pieces,
unparsed, to be passed on as they come. A line that is not a JSON object is a Message whose body
is None. What the relay has to say goes to stderr, once per kind, prefixed `stet acp:`.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
from typing import BinaryIO, TextIO

from ..domain.inert import inert
from .message import JSON, Message

LINE_BOUND = 64 * 1024 * 1024  # bytes of one line parsed as a message; longer ones pass in pieces
CHUNK = 1 << 16  # bytes read at a time

WHOLE, PIECE, LAST = 0, 1, 2  # a whole line; a piece of an over-long line; the piece that ends it


class Lines:
    """The lines of a stream, bounded: `next()` gives (bytes, WHOLE) for a line, its end
    included; (bytes, PIECE) ... (bytes, LAST) for a line longer than `bound`; None at the end.
    What ends without a line end is a last line as it is."""

    def __init__(self, reader: asyncio.StreamReader, bound: int = LINE_BOUND) -> None:
        self._reader, self._bound = reader, bound
        self._buf = bytearray()
        self._pos = 0  # what is before it was given out
        self._scanned = 0  # no line end in the buffer before this
        self._long = False  # inside a line over the bound
        self._eof = False

    async def next(self) -> tuple[bytes, int] | None:
        buf = self._buf
        while True:
            i = buf.find(b"\n", max(self._pos, self._scanned))
            if i >= 0:
                data = bytes(buf[self._pos : i + 1])
                # i - pos: the line's length before its end (a line over the bound ends its pieces, or is one)
                kind = LAST if self._long or i - self._pos > self._bound else WHOLE
                self._pos = self._scanned = i + 1
                self._long = False
                return data, kind
            self._scanned = len(buf)
            rest = len(buf) - self._pos
            if rest and (self._long or rest > self._bound):
                data = bytes(buf[self._pos :])
                self._clear()
                if self._eof:
                    self._long = False
                    return data, LAST
                self._long = True
                return data, PIECE
            if self._eof:
                if self._long:  # the stream ended inside an over-long line: nothing more of it
                    self._long = False
                    return b"", LAST
                if not rest:
                    return None
                data = bytes(buf[self._pos :])
                self._clear()
                return data, WHOLE
            if self._pos:  # what was given out goes, once per read (not once per line)
                del buf[: self._pos]
                self._scanned -= self._pos
                self._pos = 0
            more = await self._reader.read(CHUNK)
            if more:
                buf += more
            else:
                self._eof = True

    def _clear(self) -> None:
        self._buf.clear()
        self._pos = self._scanned = 0


def split_end(line: bytes) -> tuple[bytes, bytes]:
    """A line without its end, and its end (b"\\r\\n", b"\\n" or b"")."""
    if line.endswith(b"\r\n"):
        return line[:-2], b"\r\n"
    if line.endswith(b"\n"):
        return line[:-1], b"\n"
    return line, b""


def parse(raw: bytes) -> Message:
    """The message of a line (without its end): its body None unless it is a JSON object."""
    try:
        body = json.loads(raw)
    except (ValueError, RecursionError):
        body = None
    return Message(raw, body if isinstance(body, dict) else None)


def encode(body: JSON) -> bytes:
    """A body Stet writes (a rewrite, a reply, an error): compact, UTF-8, one line."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


class Output:
    """Where lines are written: one writer at a time (`lock`, held across the pieces of an
    over-long line), each line in one write."""

    def __init__(self, writer: asyncio.StreamWriter | None, fd: int | None = None) -> None:
        self._writer, self._fd = writer, fd
        self.lock = asyncio.Lock()
        self.broken = False

    async def write(self, data: bytes) -> None:
        """Write `data` (raises OSError / ConnectionError when the reader is gone)."""
        if self._writer is not None:
            self._writer.write(data)
            await self._writer.drain()
        elif self._fd is not None:  # a regular file: writes do not wait on a reader
            view = memoryview(data)
            while view:
                view = view[os.write(self._fd, view) :]

    async def send(self, data: bytes) -> bool:
        """`data` written whole under the lock; False when the reader is gone."""
        if self.broken:
            return False
        async with self.lock:
            try:
                await self.write(data)
            except (OSError, ConnectionError, RuntimeError):
                self.broken = True
        return not self.broken

    def close(self) -> None:
        if self._writer is not None:
            try:
                self._writer.close()
            except (OSError, RuntimeError):
                pass

    async def aclose(self, within: float = 5.0) -> None:
        """Closed once what was written has gone out (or `within` seconds passed)."""
        self.close()
        if self._writer is not None:
            try:
                await asyncio.wait_for(self._writer.wait_closed(), within)
            except (TimeoutError, OSError, ConnectionError):
                pass


def _pollable(fd: int) -> bool:
    """Whether the event loop can wait on `fd` (a pipe, a socket, a terminal; not a regular file
    nor /dev/null, which epoll refuses)."""
    import selectors

    with selectors.DefaultSelector() as probe:
        try:
            probe.register(fd, selectors.EVENT_READ)
        except (OSError, ValueError):
            return False
    return True


async def open_input(f: BinaryIO) -> asyncio.StreamReader:
    """A reader of the file `f` (a pipe, a socket, a terminal; a regular file is read by a thread)."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=CHUNK * 4, loop=loop)
    try:
        if not _pollable(f.fileno()):
            raise ValueError("not pollable")
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader, loop=loop), f)
    except ValueError:  # a regular file, /dev/null: read in a thread
        fd = f.fileno()

        def pump() -> None:
            while True:
                try:
                    data = os.read(fd, CHUNK)
                except OSError:
                    data = b""
                if not data:
                    loop.call_soon_threadsafe(reader.feed_eof)
                    return
                loop.call_soon_threadsafe(reader.feed_data, data)

        threading.Thread(target=pump, name="stet-acp-stdin", daemon=True).start()
    return reader


class _Writing(asyncio.streams.FlowControlMixin):
    """A write pipe's protocol that says when the pipe is closed (all written, or the reader gone)."""

    def __init__(self) -> None:
        super().__init__()
        self.closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        if not self.closed.done():
            self.closed.set_result(None)

    def _get_close_waiter(self, stream: object) -> asyncio.Future[None]:
        return self.closed


async def open_output(f: BinaryIO) -> Output:
    """An Output to the file `f` (a pipe or socket; a regular file is written directly)."""
    loop = asyncio.get_running_loop()
    try:
        if not _pollable(f.fileno()):
            raise ValueError("not pollable")
        transport, protocol = await loop.connect_write_pipe(_Writing, f)
    except ValueError:  # a regular file, /dev/null: written directly
        return Output(None, f.fileno())
    return Output(asyncio.StreamWriter(transport, protocol, None, loop))


class Log:
    """What the relay says on stderr: each kind once."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self._stream = stream if stream is not None else sys.stderr
        self._said: set[str] = set()

    def once(self, kind: str, text: str) -> None:
        if kind in self._said:
            return
        self._said.add(kind)
        self.say(text)

    def say(self, text: str) -> None:
        try:
            print(f"stet acp: {text}", file=self._stream, flush=True)
        except (OSError, ValueError):
            pass


def shown(data: bytes, bound: int = 200) -> str:
    """Some bytes an agent or editor wrote, bounded and inert for a log line."""
    text = data[:bound].decode("utf-8", "replace")
    return inert(text) + ("..." if len(data) > bound else "")
