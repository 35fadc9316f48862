"""`stet` as it starts: the thin client. It hands a call an agent runs often to the resident
process of its workspace and prints the answer; any other call, or one no resident takes, runs
in this process as it always did (cli/main.py), with the same request id, so that a call whose
resident died mid-way is replayed there, never done twice. Where no resident answers, it starts
one for the next call (STET_RESIDENT=off: never).

It imports only what Python has loaded at start (os, sys, io) and `_socket`: `import socket`
alone costs half of `python -c pass`."""

from __future__ import annotations

import io
import os
import sys

from . import place, wire

TIMEOUT = float(os.environ.get("STET_RESIDENT_TIMEOUT", "120"))


class Refused(Exception):
    """What is at the resident's place is not its own: said once, not used, not replaced."""


def main() -> int:
    argv = sys.argv[1:]
    command = next((a for a in argv if not a.startswith("-")), None)
    status = command == "resident" and "--status" in argv  # answered by the resident itself, when one runs
    if command == "resident" and not status:
        return _resident(argv[1:])
    off = os.environ.get("STET_RESIDENT", "").lower() in ("off", "0", "no", "false")
    # A call that carries a test's fault point means it for its own process (faults.py).
    off = off or bool(os.environ.get("STET_FAULT"))
    if off or not (status or command in place.ROUTED):
        return _resident(argv[1:]) if status else _here(argv, None)
    request_id = os.urandom(12).hex()
    try:
        home = place.home_of_call(argv, os.getcwd(), os.environ)
    except OSError:  # the current folder deleted under the shell: the command says so
        home = None
    if home is None:
        return _resident(argv[1:]) if status else _here(argv, request_id)
    reads = command == "hook" or (command == "propose" and "-" in argv)
    stdin = _stdin() if reads else b""
    if command == "hook" and (b"UserPromptSubmit" in stdin or b"SessionStart" in stdin):
        # What these tell the agent is recorded as told once it is written: only this process
        # knows whether its stdout took it (an answer it could not write is told again).
        sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
        return _here(argv, request_id)
    start = False
    try:
        answer = _ask(home, argv, request_id, stdin)
    except Refused as exc:
        print(f"stet: {exc} (the call runs without the resident)", file=sys.stderr)
        answer = None
    except OSError:  # none there, a stale socket, or it died mid-call: this process does it
        answer, start = None, not status
    if isinstance(answer, tuple):
        return _deliver(*answer)
    if status:
        return _resident(argv[1:])
    if start or answer == "start":
        _start_resident(place.store_options(argv))
    if reads:
        sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
    return _here(argv, request_id)


def _resident(argv: list[str]) -> int:
    from .server import main as resident

    return resident(argv)


def _here(argv: list[str], request_id: str | None) -> int:
    from ..cli.main import main as run

    return run(argv, request_id)


def _stdin() -> bytes:
    if sys.stdin is None:
        return b""
    try:
        return sys.stdin.buffer.read()
    except OSError:
        return b""


def _ask(home: str, argv: list[str], request_id: str, stdin: bytes) -> tuple[int, bytes, bytes] | str:
    """The resident's answer: (exit code, stdout, stderr); or when it declines the call,
    "start" if a new resident should take over (newer code on disk, a lost store: it stops),
    else "" (another store, other settings). Raises OSError when none answers, Refused
    when what is there is not a resident of this user."""
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
            sock.sendall(wire.pack(_request(argv, request_id, stdin)))
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


def _request(argv: list[str], request_id: str, stdin: bytes) -> list[bytes]:
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


def _deliver(code: int, out: bytes, err: bytes) -> int:
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


def _start_resident(options: list[str]) -> None:
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
