"""`stet` as it starts: the thin client. It hands a call an agent runs often to the resident
process of its workspace and prints the answer; any other call, or one no resident takes, runs
in this process as it always did (cli/main.py), with the same request id, so that a call whose
resident died mid-way is replayed there, never done twice. Where no resident answers, it starts
one for the next call (STET_RESIDENT=off: never).

The input a call reads is read here, in the caller's process (cli/inputs.py): its stdin and the
files its command line names, bounded, never blocked on; the resident gets the bytes.

It imports only what Python has loaded at start (os, sys, io, time) and `_socket` (and, for a call
that reads input, limits.py and cli/inputs.py; for a hook, events.py, and `_json` when it may be one
of the events run here or one Stet has nothing to do for, answered here: Codex's shell commands
that are no patch; for `stet mcp` on stdio, mcp/stdio.py, which answers the agent's `initialize`
while the rest starts): `import socket` alone costs half of `python -c pass`."""

import os
import sys

from . import place
from .ask import START, NotTaken, Refused, ask, deliver, start_resident

TYPE_CHECKING = False  # no `typing` in the thin client
if TYPE_CHECKING:
    from typing import NoReturn

_MCP_NOT_STDIO = {"--http", "--print-token", "-h", "--help"}


def main() -> int:
    argv = sys.argv[1:]
    command = next((a for a in argv if not a.startswith("-")), None)
    status = command == "resident" and "--status" in argv  # answered by the resident itself, when one runs
    if command == "resident" and not status:
        return _resident(argv[1:])
    off = os.environ.get("STET_RESIDENT", "").lower() in ("off", "0", "no", "false")
    # A call that carries a test's fault point means it for its own process (faults.py).
    off = off or bool(os.environ.get("STET_FAULT"))
    if command == "mcp" and not _MCP_NOT_STDIO.intersection(a.split("=")[0] for a in argv):
        # The agent waits for `initialize` before anything else: answered from now on (mcp/stdio.py).
        from ..mcp.stdio import start_front

        start_front()
    if command == "run" and not off:
        from . import run

        home = run.home(argv) if run.takes(argv) else None
        return run.run(argv, home) if home else _here(argv, None)
    # A hook's input is read first: a call Stet has nothing to do for is answered (nothing) here.
    early = _inputs(command, argv) if command == "hook" else None
    if early is not None and early[0] is not None and _nothing_for(argv, early[0]):
        return 0
    given = None if early is None else early[1] if early[0] is None else {**early[1], "-": early[0]}
    if off or not (status or command in place.ROUTED):
        return _resident(argv[1:]) if status else _here(argv, None, given)
    request_id = os.urandom(12).hex()
    try:
        home = place.home_of_call(argv, os.getcwd(), os.environ)
    except OSError:  # the current folder deleted under the shell: the command says so
        home = None
    if home is None:
        return _resident(argv[1:]) if status else _here(argv, request_id, given)
    stdin, files = _inputs(command, argv) if early is None else early
    read: dict[str, bytes] = {}
    for name, got in files.items():
        if not isinstance(got, bytes):  # refused (unreadable, too large): said by the command, in this process
            return _here(argv, request_id, files)
        read[name] = got
    if command == "hook" and stdin is not None and _told_here(stdin):
        # What these tell the agent is recorded as told once it is written: only this process
        # knows whether its stdout took it (an answer it could not write is told again). The
        # event as parsed, never a word anywhere in it (a PostToolUse carries whole files).
        return _here(argv, request_id, {**files, "-": stdin})
    start = False
    try:
        answer = ask(home, argv, request_id, stdin or b"", read)
    except Refused as exc:
        print(f"stet: {exc} (the call runs without the resident)", file=sys.stderr)
        answer = None
    except NotTaken:  # one is there, busy or wedged: not another; this process does the call
        print(f"stet: the resident did not start the call within {START:g} s: it runs in this process", file=sys.stderr)
        answer = None
    except OSError:  # none there, a stale socket, or it died mid-call: this process does it
        answer, start = None, not status
    if isinstance(answer, tuple):
        _end(deliver(*answer))
    if status:
        return _resident(argv[1:])
    if start or answer == "start":
        start_resident(place.store_options(argv))
    # What this process read is the call's input here too: a pipe cannot be read twice.
    return _here(argv, request_id, files if stdin is None else {**files, "-": stdin})


def _end(code: int) -> "NoReturn":
    """The resident's answer is written: this process ends now, without the interpreter's
    teardown (a millisecond or more of every call: more than the whole answer of a `show`).
    Nothing is left to it: no atexit handler, no thread, no file of its own but stdout and
    stderr, flushed here."""
    for stream in (sys.stdout, sys.stderr):
        if stream is not None:
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
    os._exit(code)


def _nothing_for(argv: list[str], stdin: bytes) -> bool:
    from . import events

    words = [a for a in argv if not a.startswith("-")]
    return len(words) > 1 and events.nothing_for(words[1], stdin)


def _told_here(stdin: bytes) -> bool:
    from . import events  # a hook's only: `_json` is not loaded for the other calls

    return events.told_here(stdin)


def _inputs(command: str | None, argv: list[str]) -> "tuple[bytes | None, dict[str, bytes | Exception]]":
    """What the call reads, read here (cli/inputs.py): its stdin (None: it reads none) and the
    files its command line names, by name. One refused (unreadable, too large) is there as the
    exception met, for the command, which says why as it does in a process of its own."""
    if command not in ("propose", "hook"):
        return None, {}
    from .. import limits
    from ..cli import inputs

    named = inputs.names(argv) if command == "propose" else []
    files: dict[str, bytes | Exception] = {}
    for name in named:
        if name != "-":
            try:
                files[name] = inputs.read(name, limits.PATCH)
            except (inputs.Unreadable, inputs.Oversize) as exc:
                files[name] = exc
                return None, files
    if command != "hook" and "-" not in named:
        return None, files
    try:
        return inputs.stdin(limits.HOOK if command == "hook" else limits.PATCH), files
    except (inputs.Unreadable, inputs.Oversize) as exc:
        files["-"] = exc
        return None, files


def _resident(argv: list[str]) -> int:
    from .server import main as resident

    return resident(argv)


def _here(argv: list[str], request_id: str | None, inputs: "dict[str, bytes | Exception] | None" = None) -> int:
    """The call run in this process (cli/main.py), with what this process read for it."""
    from ..cli.call import Call
    from ..cli.main import run_here

    return run_here(Call.of_process(argv, request_id, inputs))
