"""One call to a workspace's resident from the thin client (client.py, run.py): the command line
sent, the answer read and printed. Light like the client: os, sys, time and `_socket` only.

A call the resident has not started within START seconds (calls before it, a wedged process) is
done by this process: the call carries its start-by time, after which the resident never starts
it, and the resident marks the moment it starts one (wire.TAKEN)."""

import os
import sys
import time

from . import place, wire

TIMEOUT = float(os.environ.get("STET_RESIDENT_TIMEOUT", "120"))  # seconds of a call it started
# Seconds a resident has to start a call (other calls before it, a wedged process): then this
# process does it, well within the minute an agent gives a hook; the resident, past that time,
# never starts it (the client decides alone: nothing is done twice).
START = float(os.environ.get("STET_RESIDENT_START", "10"))


class Refused(Exception):
    """What is at the resident's place is not its own: said once, not used, not replaced."""


class NotTaken(Exception):
    """The resident did not start the call in time (START): it never will; this process does it."""


def ask(
    home: str, argv: list[str], request_id: str, stdin: bytes, files: dict[str, bytes]
) -> tuple[int, bytes, bytes] | str:
    """The resident's answer to the call, sent with its stdin and the input files this process
    read for it (by the name its command line gives): (exit code, stdout, stderr); or when it
    declines the call, "start" if a new resident should take over (newer code on disk, a lost
    store, a moved workspace: it stops), else "" (another store, other settings, too many calls
    at once). Raises OSError when none answers, NotTaken when it did not start the call in time,
    Refused when what is there is not a resident of this user."""
    import _socket

    try:
        folder = place.open_folder(home)
    except ValueError as exc:
        raise Refused(str(exc)) from None
    try:
        why = place.socket_problem(folder, home)
        if why:
            raise Refused(why)
        sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        try:
            sock.settimeout(START + wire.GRACE)
            sock.connect(place.address(folder, home))
            peer = wire.peer_uid(sock)
            if peer is not None and peer != os.geteuid():
                raise Refused(f"the process at {home}/{place.SOCKET} runs as uid {peer}, not as you")
            start_by = time.monotonic() + START
            try:
                sock.sendall(wire.pack(_request(argv, request_id, stdin, files, start_by)))
                sock.shutdown(_socket.SHUT_WR)
            except (BrokenPipeError, ConnectionResetError):
                pass  # declined before it read the call (too many at once): its answer says so
            data = _read_answer(sock, start_by + wire.GRACE)
        finally:
            sock.close()
    finally:
        os.close(folder)
    parts = wire.unpack(data)
    if parts is None or len(parts) != 5:
        raise ConnectionResetError("the resident's answer was cut short")
    if parts[1] != b"done":
        return parts[3].decode("ascii", "replace")
    return int(parts[2]), parts[3], parts[4]


def _request(argv: list[str], request_id: str, stdin: bytes, files: dict[str, bytes], start_by: float) -> list[bytes]:
    tty = sys.stdout is not None and sys.stdout.isatty()
    env = "\0".join(f"{k}={v}" for k, v in os.environ.items())
    umask = os.umask(0o077)  # read back at once: this process has no other thread
    os.umask(umask)
    return [
        wire.MAGIC,
        request_id.encode(),
        os.fsencode(os.getcwd()),
        b"1" if tty else b"0",
        b"\0".join(os.fsencode(a) for a in argv),
        env.encode("utf-8", "surrogateescape"),
        stdin,
        wire.pack([part for name, data in files.items() for part in (os.fsencode(name), data)]),
        b"%d" % umask,
        repr(start_by).encode(),  # time.monotonic(): one clock for every process of the system
    ]


def _read_answer(sock: object, taken_by: float) -> bytes:
    """The resident's answer, its TAKEN mark dropped. Raises NotTaken when neither the mark nor
    an answer began by `taken_by` (time.monotonic())."""
    chunks: list[bytes] = []
    size = 0
    begun = False  # the mark, or an answer sent without it (a call declined before it started)
    while True:
        if not begun:
            left = taken_by - time.monotonic()
            if left <= 0:
                raise NotTaken()
            sock.settimeout(left)  # type: ignore[attr-defined]
        try:
            chunk = sock.recv(1 << 16)  # type: ignore[attr-defined]
        except TimeoutError:
            if begun:
                raise
            chunk = _last_look(sock)  # what came as the time ran out
            if not chunk:
                raise NotTaken() from None
        except ConnectionResetError:
            chunk = b""  # it closed with our call unread (declined at once): what it wrote came first
        if not begun and chunk:
            begun = True
            sock.settimeout(TIMEOUT)  # type: ignore[attr-defined]
            if chunk[:1] == wire.TAKEN:
                chunk = chunk[1:]
                if not chunk:
                    continue
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        size += len(chunk)
        if size > wire.MOST:
            raise ConnectionResetError("the resident's answer is too large")


def _last_look(sock: object) -> bytes:
    """What the resident sent, without waiting (b"": nothing yet)."""
    sock.setblocking(False)  # type: ignore[attr-defined]
    try:
        chunk: bytes = sock.recv(1 << 16)  # type: ignore[attr-defined]
        return chunk
    except (BlockingIOError, InterruptedError):
        return b""


def deliver(code: int, out: bytes, err: bytes) -> int:
    """Print the resident's answer; output that cannot be written is said as cli/main says it."""
    try:
        _write(sys.stdout, out)
    except BrokenPipeError:  # `stet log | head`
        _drop(sys.stdout)
        return 0
    except OSError as exc:  # a full disk
        _drop(sys.stdout)
        print(f"stet: cannot write the output: {exc.strerror}", file=sys.stderr)
        return 2
    try:
        _write(sys.stderr, err)
    except OSError:
        _drop(sys.stderr)
    return code


def _write(stream: object, data: bytes) -> None:
    if stream is None or not data:
        return
    stream.flush()  # type: ignore[attr-defined]
    stream.buffer.write(data)  # type: ignore[attr-defined]
    stream.buffer.flush()  # type: ignore[attr-defined]


def _drop(stream: object) -> None:
    """What is still buffered for `stream` cannot be written: send it nowhere, or Python
    reports the failed flush again at exit."""
    if stream is not None:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())  # type: ignore[attr-defined]


def start_resident(options: list[str]) -> None:
    """Start this workspace's resident, detached, for the next call; it finds its store as
    this call would (same folder, same settings). Two started together: one stays."""
    devnull = os.devnull
    actions = [
        (os.POSIX_SPAWN_OPEN, 0, devnull, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_OPEN, 1, devnull, os.O_WRONLY, 0),
        (os.POSIX_SPAWN_OPEN, 2, devnull, os.O_WRONLY, 0),
    ]
    try:
        os.posix_spawn(
            sys.executable,
            [sys.executable, "-m", "stet", "resident", *options],
            os.environ,
            file_actions=actions,
            setsid=True,
        )
    except (OSError, AttributeError):  # no posix_spawn here: calls just run in their own process
        pass
