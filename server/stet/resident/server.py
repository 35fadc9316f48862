"""`stet resident`: the process that keeps a workspace's review open and answers the thin
client's calls (client.py) on `.stet/resident.sock`.

A call is the command line the user typed, run by the same code as in its own process
(cli/main.py) as a `Call` (cli/call.py) of the caller's folder, environment, stdin and input
files, its output kept in memory and sent back whole: nothing of the process (its folder,
environment, stdio) is changed for it. It runs on this process's review brought up to date
first (`Review.up_to_date`, as every door: what other processes committed, unfinished
journaled edits, files changed since). Calls that only read (`stet status`, `show`, `log`,
`resume`) are answered side by side; a call that writes runs alone. A call this process should not answer (another
store, other STET_* settings, newer code on disk, a store lost) is declined: the client runs
it itself. Killed at any point (SIGKILL included), nothing is lost or doubled: a decision is
acknowledged only after its commit, its edit is journaled, and the client replays the call in
its own process with the same request id, which the operation log answers once.

It stops after STET_RESIDENT_IDLE seconds without a call (600), when its socket or folder is
removed or replaced (`git clean -fdx`) or moved (the workspace moved: whatever is at the old path
now is not its own, and it never writes there), when its store is lost, and on SIGTERM: after the
call in progress, or STOP_GRACE seconds later if that call holds the process (see _stop_when_told).

Many callers, none able to hold it or act through it for another: a connection must send its call
within CALL_DEADLINE, at most MOST_CONNECTIONS are held (more are declined at once: the client runs
the call), a call not started by its start-by time is declined (the client has run it), and what a
call makes gets its caller's umask (workspace/modes.py)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import logging
import os
import signal
import sys
import time
import traceback

from aiorwlock import RWLock

from ..cli import hosting
from ..cli import main as cli_main
from ..cli.call import Call
from ..cli.locate import locate
from ..domain.inert import inert
from ..errors import StetError, StoreLost
from ..faults import pause
from ..review import Review, open_review
from ..review.where import engine_of
from ..workspace import modes, own
from . import place, wire
from .code import Code

try:
    import fcntl
except ImportError:  # not POSIX: no resident
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger(__name__)

IDLE = float(os.environ.get("STET_RESIDENT_IDLE", "600"))
TICK = 1.0  # seconds between looks at the socket, the folder and the idle time
STOP_GRACE = 10  # seconds a resident told to stop gives the call in progress (then it ends)
CALL_DEADLINE = 5.0  # seconds a connection has to send its whole call (the client sends it at once)
ANSWER_DEADLINE = 30.0  # seconds a client has to take its answer
MOST_CONNECTIONS = 64  # connections held at once; more are declined at once (the client runs the call)
LOCK_WAIT = 3.0  # seconds a resident starting waits for the one before it to let go (one that stops)


class Resident:
    def __init__(self, review: Review, db: str, roots: list[str], home: str, folder: int):
        self.review, self.db, self.roots, self.home, self.folder = review, db, roots, home, folder
        # Reads side by side, a write alone; writers first, so a stream of reads never holds one back.
        self.turns = RWLock(fast=True)
        self.catching_up = asyncio.Lock()  # one review brought up to date by one call at a time
        self.last = time.monotonic()
        self.stopping = asyncio.Event()
        self.env_key = place.env_key(os.environ)
        self.code = Code()
        self.socket_id: tuple[int, int] | None = None
        self.calls = 0
        self.tidied = 0  # calls answered when the temp files of killed writes were last tidied
        self.connections = 0
        st = os.fstat(folder)
        self.folder_id = (st.st_dev, st.st_ino)  # the .stet folder it serves, wherever it is now

    async def host(self, db: str, roots: list[str], call: Call) -> Review:
        """A call's hosting.Host: the review of its command's store, if it is this one, brought up to date."""
        if db != self.db or roots != self.roots:
            raise hosting.NotHere(db)
        if self.moved():
            self.stopping.set()
            raise hosting.NotHere("its workspace moved")
        async with self.catching_up:
            await self.review.require_store().check()
            # The temp files killed writes left are tidied between calls (tidy), not before each.
            lag = (await self.review.up_to_date(env=call.env)).lag
        if lag:
            call.say(f"stet: {inert(lag)}")
        return self.review

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """One connection: its call read within CALL_DEADLINE, started by its start-by time or
        declined, answered within ANSWER_DEADLINE. Past MOST_CONNECTIONS, declined at once."""
        if self.connections >= MOST_CONNECTIONS:
            with contextlib.suppress(OSError, RuntimeError):
                writer.write(wire.pack([wire.MAGIC, *_declined(f"{self.connections} calls at once")]))
            writer.close()
            return
        self.connections += 1
        try:
            answer = await self._take(reader, writer)
            if answer is not None:
                writer.write(wire.pack([wire.MAGIC, *answer]))
                await asyncio.wait_for(writer.drain(), ANSWER_DEADLINE)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass  # the client went away: what it asked for is done (or not) as if it had stayed
        except TimeoutError:
            writer.transport.abort()  # it does not take its answer: not held for it
        finally:
            self.connections -= 1
            writer.close()

    async def _take(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> list[bytes] | None:
        """The answer to the connection's call (None: no answer, nothing was done)."""
        peer = wire.peer_uid(writer.get_extra_info("socket"))
        if peer is not None and peer != os.geteuid():
            log.warning("refused a connection from uid %s", peer)
            return None
        try:
            data = await asyncio.wait_for(_read_call(reader), CALL_DEADLINE)
        except TimeoutError:
            return None  # a connection that sends no call is not held
        parts = wire.unpack(data) if data is not None else None
        if parts is None or len(parts) != 10:
            return None  # not a whole call: nothing was done
        try:
            start_by = float(parts[9])
        except ValueError:
            return None
        argv = [os.fsdecode(a) for a in parts[4].split(b"\0")] if parts[4] else []
        turn = self.turns.reader if place.reads_only(argv) else self.turns.writer
        try:
            # In this task (not wait_for's own): the lock knows its holder by task.
            async with asyncio.timeout(max(0.0, start_by - time.monotonic())):
                await turn.acquire()
        except TimeoutError:
            return _declined("other calls took its time")
        try:
            if not await _mark_taken(writer, start_by):
                return _declined("not started in time")
            self.last = time.monotonic()
            answer = await self.answer(parts[:9], argv)
            self.last = time.monotonic()
            return answer
        finally:
            turn.release()

    async def answer(self, parts: list[bytes], argv: list[str]) -> list[bytes]:
        """[b"done", exit code, stdout, stderr], or [b"declined", why, b"start" when a new
        resident should take over (this one stops), b""]."""
        _, request_id, cwd, tty, _argv, env_raw, stdin, files_raw, umask_raw = parts
        files = _files(files_raw)
        umask = int(umask_raw) if umask_raw.isdigit() else None
        if files is None or umask is None:
            return _declined("not a whole call")
        env = dict(e.split("=", 1) for e in env_raw.decode("utf-8", "surrogateescape").split("\0") if "=" in e)
        command = place.command_of(argv)
        if self.moved():
            # Its store is not lost: its workspace is elsewhere, and another may be at its old place,
            # which this process must never write into. It stops; one starts for the moved workspace.
            self.stopping.set()
            return _declined("its workspace moved", replace=True)
        if command == "resident" and "--status" in argv:
            idle = time.monotonic() - self.last
            store = engine_of(self.db).named(self.db)  # (a url may hold a password)
            said = f"resident {os.getpid()}: {self.calls} call(s) answered, store {store}, idle {idle:.0f} s\n"
            return [b"done", b"0", said.encode(), b""]
        if command not in place.ROUTED and not place.run_phase(argv):
            return _declined("not a call a resident answers")
        if place.env_key(env) != self.env_key:
            # The newest settings win: this resident stops and the caller starts one with its own.
            self.stopping.set()
            return _declined("other STET_* settings", replace=True)
        if self.code.changed():
            self.stopping.set()  # Stet was upgraded or edited: a new resident runs the new code
            return _declined("newer code on disk", replace=True)
        try:
            await self.review.require_store().check()
        except StoreLost:
            self.stopping.set()
            return _declined("the store was lost", replace=True)
        folder = os.fsdecode(cwd)
        if not os.path.isdir(folder):
            return _declined("the call's folder is gone")
        self.calls += 1
        out, err = _Output(tty == b"1"), _Output(False)
        call = Call(
            argv,
            cwd=folder,
            env=env,
            stdin=io.BytesIO(stdin),
            stdout=out,
            stderr=err,
            request_id=request_id.decode(),
            inputs=dict(files),
            umask=umask,
            host=self.host,
        )
        if place.reads_only(argv):
            await pause("resident:read")  # tests widen a read to see another taken beside it
        return await self._run(call, out, err)

    async def _run(self, call: Call, out: _Output, err: _Output) -> list[bytes]:
        with modes.for_caller(call.umask):  # what the call makes gets its caller's mode
            try:
                code = await cli_main.run(call)
            except hosting.NotHere as exc:
                return _declined(exc.why)
            except Exception:  # a bug: said as the command's own process would, then a fresh resident
                traceback.print_exc(file=err)
                code = 1
                self.stopping.set()
        with contextlib.suppress(Exception):
            out.flush()
            err.flush()
        return [b"done", str(code).encode(), out.buffer.getvalue(), err.buffer.getvalue()]  # type: ignore[attr-defined]

    async def watch(self) -> None:
        """Stop when idle, or when the socket is no longer this process's (removed, replaced)."""
        while not self.stopping.is_set():
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.stopping.wait(), TICK)
            if self.turns.reader.locked or self.turns.writer.locked:
                continue
            if self.tidied != self.calls:
                await self.tidy()
            if time.monotonic() - self.last > IDLE or self._socket_now() != self.socket_id or self.moved():
                self.stopping.set()

    async def tidy(self) -> None:
        """Remove the temp files killed writes left beside files with hunks (as opening a review
        does), between calls: never on a call's way."""
        async with self.turns.writer:
            self.tidied = self.calls
            try:
                await self.review.remove_leftovers()
            except Exception as exc:  # tried again after the next call
                log.warning("removing the temp files of killed writes failed: %s", exc)

    def moved(self) -> bool:
        """Whether the .stet folder it serves is no longer at its path (the workspace was moved or
        removed, and whatever is there now is not its own)."""
        try:
            st = os.stat(self.home, follow_symlinks=False)
        except OSError:
            return True
        return (st.st_dev, st.st_ino) != self.folder_id

    def _socket_now(self) -> tuple[int, int] | None:
        try:
            st = os.stat(os.path.join(self.home, place.SOCKET), follow_symlinks=False)
        except OSError:
            return None
        return (st.st_dev, st.st_ino)


async def _mark_taken(writer: asyncio.StreamWriter, start_by: float) -> bool:
    """Tell the client the call starts now (wire.TAKEN); False when it may have given up on it
    (past its time, or the mark not with it within half of wire.GRACE): then it is not done."""
    if time.monotonic() > start_by:
        return False
    writer.write(wire.TAKEN)
    await writer.drain()
    transport = writer.transport
    return transport.get_write_buffer_size() == 0 and time.monotonic() <= start_by + wire.GRACE / 2


async def _read_call(reader: asyncio.StreamReader) -> bytes | None:
    """The whole call, up to the client's end of writing (None: larger than a call may be)."""
    chunks, size = [], 0
    while chunk := await reader.read(1 << 16):
        size += len(chunk)
        if size > wire.MOST:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


class _Output(io.TextIOWrapper):
    """A call's stdout or stderr, kept in memory; a terminal if the caller's is one (colours)."""

    def __init__(self, tty: bool):
        super().__init__(io.BytesIO(), encoding="utf-8", errors="surrogateescape", line_buffering=False)
        self._tty = tty

    def isatty(self) -> bool:
        return self._tty


def _files(raw: bytes) -> dict[str, bytes] | None:
    parts = wire.split(raw)
    if parts is None or len(parts) % 2:
        return None
    return {os.fsdecode(parts[i]): parts[i + 1] for i in range(0, len(parts), 2)}


def _declined(why: str, replace: bool = False) -> list[bytes]:
    return [b"declined", why.encode(), b"start" if replace else b"", b""]


# What `stet resident --help` tells a user (the module's docstring is for who works on it).
USAGE = (
    "The process that keeps this workspace's review open so that `stet` commands and hooks answer as "
    "quickly as Python starts. The first `stet` call starts it; it stops by itself after 10 idle "
    "minutes (STET_RESIDENT_IDLE seconds). Nothing is lost if it is killed: a call it did not finish "
    "runs again in its caller's process. STET_RESIDENT=off runs every call in its own process. Its "
    "warnings go to .stet/resident.log. See docs/cli.md, 'The instant path'."
)


def main(argv: list[str]) -> int:
    """`stet resident [--db DB] [--root ROOT]... [--stop | --status]`: run the resident of the
    workspace's store (the thin client starts it), stop it, or say whether one runs (--status
    is answered by the resident itself)."""
    parser = argparse.ArgumentParser(prog="stet resident", description=USAGE)
    parser.add_argument("--db", help="the review store (default: as every command finds it)")
    parser.add_argument("--root", action="append", help="a workspace root, as for every command")
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--stop", action="store_true", help="ask the running resident to stop")
    what.add_argument("--status", action="store_true", help="say whether one runs")
    args = parser.parse_args(argv)
    if fcntl is None:
        print("stet resident: needs a POSIX system", file=sys.stderr)
        return 2
    try:
        db, roots = locate(args, False, Call.of_process(argv))
    except StetError as exc:
        print(f"stet resident: {exc.message}", file=sys.stderr)
        return 2
    home = place.home_of(db, roots)
    if home is None:
        print(f"stet resident: a store outside a .stet folder ({db}) has no resident", file=sys.stderr)
        return 2
    if args.stop:
        return _stop(home)
    if args.status:
        print("stet resident: none answers here")  # the thin client asked it first
        return 1
    try:
        return asyncio.run(_serve(db, roots, home))
    except StetError as exc:
        print(f"stet resident: {exc.name}: {exc.message}", file=sys.stderr)
        return 1


def _stop(home: str) -> int:
    """SIGTERM to the resident whose pid the pid file holds, only while a resident holds its
    lock: a pid left by one that was killed may be another process's by now."""
    pid = 0
    try:
        with own.folder(home, create=False) as folder:
            fd = own.open_file(folder, place.PIDFILE, os.path.join(home, place.PIDFILE), os.O_RDONLY)
            if fd is not None:
                try:
                    if _held(fd):
                        data = os.pread(fd, 64, 0)
                        pid = int(data) if data.strip().isdigit() else 0
                finally:
                    os.close(fd)
    except (FileNotFoundError, StetError):
        pid = 0
    if pid <= 0:
        print("stet resident: none runs here")
        return 0
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    print(f"stet resident: asked {pid} to stop")
    return 0


def _held(fd: int) -> bool:
    """Whether a running resident holds the pid file's lock."""
    assert fcntl is not None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    fcntl.flock(fd, fcntl.LOCK_UN)
    return False


async def _serve(db: str, roots: list[str], home: str) -> int:
    folder = own.open_home(home, create=True)  # 0700, this user's, no symlink (own.py)
    try:
        pid_fd = await _lock(folder, home)
        if pid_fd is None:
            return 0  # another resident serves this workspace
        try:
            stale = _stale_socket(folder, home)  # refused before the log takes stderr: said to the caller
            _log_to(folder, home)
            return await _listen(db, roots, home, folder, pid_fd, stale)
        finally:
            os.ftruncate(pid_fd, 0)  # kept (a lock file is never removed), emptied: none runs
            os.close(pid_fd)
    finally:
        os.close(folder)


async def _lock(folder: int, home: str) -> int | None:
    """The pid file, locked (None: another resident holds it, LOCK_WAIT seconds on: one that
    stopped for this one, a moved workspace's, lets go within that). One that is not Stet's own
    (a symlink, another user's) raises NotStets: refused, never followed."""
    fd = own.open_file(folder, place.PIDFILE, os.path.join(home, place.PIDFILE), os.O_RDWR | os.O_CREAT)
    assert fd is not None and fcntl is not None
    end = time.monotonic() + LOCK_WAIT
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            if time.monotonic() > end:
                os.close(fd)
                return None
        await asyncio.sleep(0.05)


def _log_to(folder: int, home: str) -> None:
    """Started detached, its warnings go to .stet/resident.log."""
    if sys.stderr is not None and sys.stderr.isatty():
        return
    where = os.path.join(home, place.LOG)
    fd = own.open_file(folder, place.LOG, where, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    if fd is not None:
        os.dup2(fd, 2)
        os.close(fd)
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s resident %(process)d: %(message)s")


async def _listen(db: str, roots: list[str], home: str, folder: int, pid_fd: int, stale: bool) -> int:
    import socket

    opened = await open_review(roots, db, create=False, quarantine=False)
    resident = Resident(opened.review, db, roots, home, folder)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        if stale:
            os.unlink(place.SOCKET, dir_fd=folder)  # a dead resident's: we hold the lock it held
        mask = os.umask(0o177)  # the socket is born 0600
        try:
            sock.bind(place.address(folder, home))
        finally:
            os.umask(mask)
        st = os.stat(place.SOCKET, dir_fd=folder, follow_symlinks=False)
        resident.socket_id = (st.st_dev, st.st_ino)
        os.ftruncate(pid_fd, 0)
        os.pwrite(pid_fd, f"{os.getpid()}\n".encode(), 0)
        server = await asyncio.start_unix_server(resident.handle, sock=sock)
        _stop_when_told(asyncio.get_running_loop(), resident.stopping)
        await resident.watch()
        server.close()
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(server.wait_closed(), 5)
        return 0
    finally:
        sock.close()
        if resident.socket_id is not None:
            _forget(folder, place.SOCKET, resident.socket_id)
        await opened.review.close()


def _stop_when_told(loop: asyncio.AbstractEventLoop, stopping: asyncio.Event) -> None:
    """SIGTERM (`stet resident --stop`) or SIGINT: stop once the call in progress is answered. A
    call can hold the event loop (a blocking read, a long computation): the handler is Python's
    own, not the loop's, so it runs all the same, and arms SIGALRM, whose default action ends the
    process STOP_GRACE seconds later if it is still there - as SIGKILL would, which loses nothing:
    its client replays the call by its request id. A second signal ends it at once."""

    def told(signum: int, frame: object) -> None:
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGALRM):
            signal.signal(sig, signal.SIG_DFL)
        signal.alarm(STOP_GRACE)
        loop.call_soon_threadsafe(stopping.set)

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, told)


def _stale_socket(folder: int, home: str) -> bool:
    """Whether a socket is left at the resident's place (by a resident that died: the pid file's
    lock is ours). What is not a socket of this user is refused: never removed or used."""
    try:
        why = place.socket_problem(folder, home)
    except FileNotFoundError:
        return False
    if why:
        raise own.NotStets(why)
    return True


def _forget(folder: int, name: str, ident: tuple[int, int]) -> None:
    """Remove `name` if it is still the file this process made (not one put there since)."""
    with contextlib.suppress(OSError):
        st = os.stat(name, dir_fd=folder, follow_symlinks=False)
        if (st.st_dev, st.st_ino) == ident:
            os.unlink(name, dir_fd=folder)
