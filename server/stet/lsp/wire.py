"""Reading LSP messages from stdio, robust to a misbehaving client.

pygls' own loop matches a header only when it is the whole line, so one broken frame glues
every later body to the next header and the server never reads another message. Here:
- a header is found at the end of a line, whatever precedes it (garbage resynchronises at the
  next real header); `\\n` alone is accepted as a line end;
- header lines and bodies are bounded: an oversized body is read and dropped in chunks;
- a body that is not JSON (invalid, not UTF-8, nested too deep) is answered with a JSON-RPC
  Parse error (-32700, id null), as JSON-RPC 2.0 asks, and the server goes on;
- the end of input ends the loop, even half-way through a message.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import sys
import threading
from collections.abc import Callable
from typing import Any, BinaryIO

log = logging.getLogger(__name__)

HEADER = re.compile(rb"content-length[ \t]*:[ \t]*(\d{1,12})[ \t]*\r?\n?$", re.IGNORECASE)
MAX_HEADER_LINE = 64 * 1024
MAX_BODY = 256 * 1024 * 1024  # far above the 10 MiB proposal limit, even JSON-escaped
CHUNK = 1024 * 1024


_EOF = ("eof", None)


def read_frame(stdin: BinaryIO) -> tuple[str, Any]:
    """Block until the next whole message: ("body", bytes), ("oversized", size) or ("eof", None).

    Runs on a worker thread, one call per message: a hop to a thread and back costs a
    thread wake-up and an event-loop wake-up, so reading the header lines, the blank line and
    the body in separate calls tripled that cost for every message.
    """
    length: int | None = None
    while True:
        line = stdin.readline(MAX_HEADER_LINE)
        if not line:
            return _EOF
        if line.strip():
            match = HEADER.search(line)
            if match:
                length = int(match.group(1))
            continue
        if length is None:
            continue  # a blank line outside a message
        size, length = length, None
        if size > MAX_BODY:
            left = size
            while left > 0:
                got = stdin.read(min(CHUNK, left))
                if not got:
                    return _EOF
                left -= len(got)
            return ("oversized", size)
        body = stdin.read(size) if size else b""
        if len(body) < size:
            return _EOF  # the input ended in the middle of a message
        return ("body", body)


READ_AHEAD = 8  # messages read but not yet handled, at most


async def read_messages(
    stdin: BinaryIO,
    stop_event: threading.Event,
    handle: Callable[[Any], None],
    parse: Callable[[bytes], Any],
    send_error: Callable[[Any, int, str], None],
) -> None:
    """Handle messages in order until the input ends.

    One thread reads whole messages and hands each to the event loop as it arrives: the
    loop is woken once per message, and nobody has to wake the reader to read the next one.
    """
    loop = asyncio.get_running_loop()
    frames: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
    room = threading.Semaphore(READ_AHEAD)  # a slow loop stops the reader, not the memory
    done = threading.Event()
    source = _own_reader(stdin)

    def reader() -> None:
        while True:
            room.acquire()
            if done.is_set():
                return
            try:
                frame = read_frame(source)
            except BaseException as exc:  # a closed or broken input: raised on the loop
                frame = ("error", exc)
            try:
                loop.call_soon_threadsafe(frames.put_nowait, frame)
            except RuntimeError:
                return  # the loop is closed: nobody reads any more
            if frame[0] in ("eof", "error"):
                return

    # A daemon: after `exit` the process ends even if the client keeps its end open while the
    # reader waits for a next message that will never be handled.
    threading.Thread(target=reader, name="stet-stdin", daemon=True).start()
    try:
        await _handle_frames(frames, room, stop_event, handle, parse, send_error)
    finally:
        done.set()
        room.release()


def _own_reader(stdin: BinaryIO) -> BinaryIO:
    """The process's stdin gets a buffered reader of its own for the daemon reader thread:
    at interpreter shutdown Python closes sys.stdin, which would wait for the lock a daemon
    thread blocked in a read holds (a fatal error). Other streams are read as they are."""
    if stdin is getattr(sys.stdin, "buffer", None):
        try:
            return open(stdin.fileno(), "rb", closefd=False)
        except (OSError, ValueError):
            pass
    return stdin


async def _handle_frames(
    frames: asyncio.Queue[tuple[str, Any]],
    room: threading.Semaphore,
    stop_event: threading.Event,
    handle: Callable[[Any], None],
    parse: Callable[[bytes], Any],
    send_error: Callable[..., None],
) -> None:
    while not stop_event.is_set():
        kind, value = await frames.get()
        room.release()
        if kind == "eof":
            return
        if kind == "error":
            raise value
        if kind == "oversized":
            send_error(None, -32600, f"message of {value} bytes refused: the limit is {MAX_BODY}")
            continue
        try:
            message = parse(value)
        except (ValueError, RecursionError) as exc:
            log.warning("unparsable message: %s", exc)
            send_error(None, -32700, f"Parse error: {type(exc).__name__}: {exc}"[:500])
            continue
        try:
            handle(message)
        except Exception:
            log.exception("unable to handle a message")


def load(body: bytes, object_hook: Callable[[dict[str, Any]], Any]) -> Any:
    return json.loads(body, object_hook=object_hook)
