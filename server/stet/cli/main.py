"""The `stet` command line: the agent's side of the desk, and the developer's terminal.

Each command opens the workspace's store and uses the same review service as the
language server, so a decision made here is journaled and carried out exactly once, like
one made in the editor (with no editor, files are written atomically by the service).
Exit codes: 0 success, 1 refused (Conflict, UnknownHunk), 2 bad usage or input.

Each command is a row of the operations table (operations.CLI): the function that runs it is
imported when it runs, so `stet status` loads no LSP, MCP or watcher.
"""

from __future__ import annotations

import argparse
import errno
import importlib
import os
import sys

from ..domain.text import lone_surrogate
from ..errors import Conflict, StetError, UnknownHunk
from ..operations import CLI
from .call import Call
from .parser import build_parser, command_in, printing_to

TYPE_CHECKING = False  # no `typing` at the CLI's start
if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine

    # A subcommand: an exit code, or a coroutine giving one (a command that opens the review).
    Command = Callable[[argparse.Namespace, Call], int | Coroutine[object, object, int]]


def exit_code(exc: StetError) -> int:
    return 1 if isinstance(exc, (Conflict, UnknownHunk)) else 2


def main(argv: list[str] | None = None, request_id: str | None = None) -> int:
    """Run one command in this process, as this process's call. `request_id` (the thin client's,
    see stet/resident/) is the id of a change the command makes when none was given: a call
    retried after a resident process died mid-request is then replayed, never done twice."""
    return run_here(Call.of_process(argv, request_id))


def run_here(call: Call) -> int:
    """`call` run to its end, with an event loop of its own if the command needs one."""
    outcome = execute(call)
    if isinstance(outcome, int):
        return outcome
    import asyncio  # only commands that open the review need an event loop

    try:
        return asyncio.run(outcome)
    except KeyboardInterrupt:  # asyncio.run cancelled the command and raises it again
        return 130


async def run(call: Call) -> int:
    """`call` run inside a running event loop (the resident's, a test's)."""
    outcome = execute(call)
    return outcome if isinstance(outcome, int) else await outcome


def execute(call: Call) -> int | Coroutine[object, object, int]:
    """The one way a command runs: its exit code, or a coroutine giving it when the command
    opens the review (`stet status` usually needs no event loop). Errors are said on the
    call's stderr as exit codes (`failed`)."""
    args = None
    try:
        args, outcome = start(call)
        if isinstance(outcome, int):
            return finished(call, outcome)
    except BaseException as exc:
        return failed(call, args, exc)
    return _awaited(call, args, outcome)


async def _awaited(call: Call, args: argparse.Namespace | None, outcome: Coroutine[object, object, int]) -> int:
    try:
        return finished(call, await outcome)
    except BaseException as exc:
        return failed(call, args, exc)


_PARSERS: dict[str | None, argparse.ArgumentParser] = {}


def _parser(command: str | None) -> argparse.ArgumentParser:
    """A command's parser, built once per process: a resident parses every call with the one it
    built for the first (argparse keeps no state of a parse in the parser)."""
    parser = _PARSERS.get(command)
    if parser is None:
        parser = _PARSERS[command] = build_parser(command)
    return parser


def start(call: Call) -> tuple[argparse.Namespace | None, int | Coroutine[object, object, int]]:
    """The parsed arguments and what the command returns: its exit code, or a coroutine."""
    parser = _parser(command_in(call.argv))
    try:
        with printing_to(call):
            args = parser.parse_args(call.argv)
    except SystemExit as exc:  # usage printed (exit 2), or --help (exit 0)
        return None, exc.code if isinstance(exc.code, int) else 2
    for name, value in vars(args).items():
        # Bytes that are not UTF-8 reach argv as surrogate escapes: refuse them before the store sees them.
        if lone_surrogate(value) is not None:
            call.say(f"stet: InvalidParams: the {name.replace('_', '-')} argument is not UTF-8 text")
            return args, 2
    if call.request_id is not None and getattr(args, "request_id", "") is None:
        args.request_id = f"cli-{call.request_id}"
    op = CLI[args.command]
    if op.needs_cwd and not (call.cwd and os.path.isdir(call.cwd)):
        # deleted under the shell (`git clean`, `rm -r` of the folder)
        call.say("stet: the current folder no longer exists: cd into the workspace again")
        return args, 2
    module, _, function = op.cli_run.rpartition(".")
    command: Command = getattr(importlib.import_module(f"{__package__}.{module}"), function)
    return args, command(args, call)


def cmd_serve(args: argparse.Namespace, call: Call) -> int:
    from ..lsp.serve import serve

    serve(getattr(args, "db", None))
    return 0


def cmd_demo(args: argparse.Namespace, call: Call) -> int:
    from .demo import run_demo

    return run_demo(keep=args.keep)


def finished(call: Call, code: int) -> int:
    out = call.stdout
    if out is not None and not out.closed:  # `stet serve` closes it as it exits
        out.flush()  # a full disk or a closed pipe is found here, not at exit
    return code


def failed(call: Call, args: argparse.Namespace | None, exc: BaseException) -> int:
    """The exit code of a command that raised `exc` (said on stderr); anything else is raised again."""
    if isinstance(exc, StetError):
        if getattr(args, "json", False):
            from .output import print_json

            print_json(call, {"error": {"code": exc.code, "name": exc.name, "message": exc.message, "data": exc.data}})
        from ..domain.inert import inert

        call.say(f"stet: {exc.name}: {inert(exc.message)}")  # it may quote an agent's text
        return exit_code(exc)
    if isinstance(exc, KeyboardInterrupt):
        return 130
    if isinstance(exc, BrokenPipeError):  # `stet log | head`
        _drop_stdout(call)
        return 0
    if isinstance(exc, OSError):  # output that cannot be written: a full disk, `-o` into a missing folder
        if exc.filename is None and exc.errno in _WRITE_ERRORS:
            call.say(f"stet: cannot write the output: {exc.strerror}")
        else:
            call.say(f"stet: {exc.filename or 'error'}: {exc.strerror or exc}")
        _drop_stdout(call)
        return 2
    raise exc


_WRITE_ERRORS = {errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EFBIG, errno.EPIPE, errno.EROFS}


def _drop_stdout(call: Call) -> None:
    """What is still buffered for stdout cannot be written: send it nowhere, or Python reports
    the failed flush again at exit (as the Python docs advise for SIGPIPE)."""
    out = call.stdout
    if out is None:
        return
    try:
        out.flush()
    except OSError:
        if out is sys.stdout:  # the process's own: its descriptor points nowhere from now on
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, out.fileno())


def run_mcp(args: argparse.Namespace, call: Call) -> int:
    from .locate import locate

    db, roots = locate(args, True, call)
    if args.print_token or args.http:
        # Light imports only until the token is written: the MCP SDK takes seconds to load.
        from ..mcp.http import ensure_token, serve_http
        from ..review.where import prepared_local_file

        # The token lives beside an SQLite store; with PostgreSQL, in this checkout's .stet/.
        beside = prepared_local_file(db, roots[0])
        token = ensure_token(beside)
        if args.print_token:
            call.out(token)
            return 0
        serve_http(db, roots, args.http, agent=args.agent, token_beside=beside)
        return 0
    from ..mcp.stdio import serve_stdio

    return 130 if serve_stdio(db, roots, agent=args.agent) else 0


if __name__ == "__main__":
    sys.exit(main())
