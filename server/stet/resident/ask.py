"""One call to a workspace's resident from the thin client (client.py, run.py): the command line
sent, the answer read and printed. Light like the client: os, sys and `_socket` only."""

from __future__ import annotations

import os
import sys

from . import place, wire

TIMEOUT = float(os.environ.get("STET_RESIDENT_TIMEOUT", "120"))


class Refused(Exception):
    """What is at the resident's place is not its own: said once, not used, not replaced."""


def ask(
    home: str, argv: list[str], request_id: str, stdin: bytes, files: dict[str, bytes]
) -> tuple[int, bytes, bytes] | str:
    """The resident's answer to the call, sent with its stdin and the input files this process
    read for it (by the name its command line gives): (exit code, stdout, stderr); or when it
    declines the call, "start" if a new resident should take over (newer code on disk, a lost
    store: it stops), else "" (another store, other settings). Raises OSError when none
    answers, Refused when what is there is not a resident of this user."""
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
            sock.settimeout(TIMEOUT)
            sock.connect(place.address(folder, home))
            peer = wire.peer_uid(sock)
            if peer is not None and peer != os.geteuid():
                raise Refused(f"the process at {home}/{place.SOCKET} runs as uid {peer}, not as you")
            sock.sendall(wire.pack(_request(argv, request_id, stdin, files)))
            sock.shutdown(_socket.SHUT_WR)
            data = _read_all(sock)
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


def _request(argv: list[str], request_id: str, stdin: bytes, files: dict[str, bytes]) -> list[bytes]:
    tty = sys.stdout is not None and sys.stdout.isatty()
    env = "\0".join(f"{k}={v}" for k, v in os.environ.items())
    return [
        wire.MAGIC,
        request_id.encode(),
        os.fsencode(os.getcwd()),
        b"1" if tty else b"0",
        b"\0".join(os.fsencode(a) for a in argv),
        env.encode("utf-8", "surrogateescape"),
        stdin,
        wire.pack([part for name, data in files.items() for part in (os.fsencode(name), data)]),
    ]


def _read_all(sock: object) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = sock.recv(1 << 16)  # type: ignore[attr-defined]
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        size += len(chunk)
        if size > wire.MOST:
            raise ConnectionResetError("the resident's answer is too large")


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
