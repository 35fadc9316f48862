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
from .parser import build_parser, command_in

TYPE_CHECKING = False  # no `typing` at the CLI's start
if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine

    # A subcommand: an exit code, or a coroutine giving one (a command that opens the review).
    Command = Callable[[argparse.Namespace], int | Coroutine[object, object, int]]


def exit_code(exc: StetError) -> int:
    return 1 if isinstance(exc, (Conflict, UnknownHunk)) else 2


def main(argv: list[str] | None = None, request_id: str | None = None) -> int:
    """Run one command in this process. `request_id` (the thin client's, see stet/resident/)
    is the id of a change the command makes when none was given: a call retried after a
    resident process died mid-request is then replayed, never done twice."""
    argv = sys.argv[1:] if argv is None else argv
    args = None
    try:
        args, outcome = start(argv, request_id)
        if not isinstance(outcome, int):
            import asyncio  # only commands that open the review need an event loop

            outcome = asyncio.run(outcome)
        return finished(outcome)
    except BaseException as exc:
        return failed(args, exc)


async def run_async(argv: list[str], request_id: str | None = None) -> int:
    """`main` inside a running event loop (the resident process's)."""
    args = None
    try:
        args, outcome = start(argv, request_id)
        if not isinstance(outcome, int):
            outcome = await outcome
        return finished(outcome)
    except BaseException as exc:
        return failed(args, exc)


_PARSERS: dict[str | None, argparse.ArgumentParser] = {}


def _parser(command: str | None) -> argparse.ArgumentParser:
    """A command's parser, built once per process: a resident parses every call with the one it
    built for the first (argparse keeps no state of a parse in the parser)."""
    parser = _PARSERS.get(command)
    if parser is None:
        parser = _PARSERS[command] = build_parser(command)
    return parser


def start(
    argv: list[str], request_id: str | None
) -> tuple[argparse.Namespace | None, int | Coroutine[object, object, int]]:
    """The parsed arguments and what the command returns: its exit code, or a coroutine."""
    parser = _parser(command_in(argv))
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # usage printed (exit 2), or --help (exit 0)
        return None, exc.code if isinstance(exc.code, int) else 2
    for name, value in vars(args).items():
        # Bytes that are not UTF-8 reach argv as surrogate escapes: refuse them before the store sees them.
        if lone_surrogate(value) is not None:
            print(f"stet: InvalidParams: the {name.replace('_', '-')} argument is not UTF-8 text", file=sys.stderr)
            return args, 2
    if request_id is not None and getattr(args, "request_id", "") is None:
        args.request_id = f"cli-{request_id}"
    op = CLI[args.command]
    if op.needs_cwd:
        try:
            os.getcwd()
        except FileNotFoundError:  # deleted under the shell (`git clean`, `rm -r` of the folder)
            print("stet: the current folder no longer exists: cd into the workspace again", file=sys.stderr)
            return args, 2
    module, _, function = op.cli_run.rpartition(".")
    command: Command = getattr(importlib.import_module(f"{__package__}.{module}"), function)
    return args, command(args)


def cmd_serve(args: argparse.Namespace) -> int:
    from ..lsp.serve import serve

    serve(getattr(args, "db", None))
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from .demo import run_demo

    return run_demo(keep=args.keep)


def finished(code: int) -> int:
    if sys.stdout is not None and not sys.stdout.closed:  # `stet serve` closes it as it exits
        sys.stdout.flush()  # a full disk or a closed pipe is found here, not at exit
    return code


def failed(args: argparse.Namespace | None, exc: BaseException) -> int:
    """The exit code of a command that raised `exc` (said on stderr); anything else is raised again."""
    if isinstance(exc, StetError):
        if getattr(args, "json", False):
            from .output import print_json

            print_json({"error": {"code": exc.code, "name": exc.name, "message": exc.message, "data": exc.data}})
        from ..domain.inert import inert

        print(f"stet: {exc.name}: {inert(exc.message)}", file=sys.stderr)  # it may quote an agent's text
        return exit_code(exc)
    if isinstance(exc, KeyboardInterrupt):
        return 130
    if isinstance(exc, BrokenPipeError):  # `stet log | head`
        _drop_stdout()
        return 0
    if isinstance(exc, OSError):  # output that cannot be written: a full disk, `-o` into a missing folder
        if exc.filename is None and exc.errno in _WRITE_ERRORS:
            print(f"stet: cannot write the output: {exc.strerror}", file=sys.stderr)
        else:
            print(f"stet: {exc.filename or 'error'}: {exc.strerror or exc}", file=sys.stderr)
        _drop_stdout()
        return 2
    raise exc


_WRITE_ERRORS = {errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EFBIG, errno.EPIPE, errno.EROFS}


def _drop_stdout() -> None:
    """What is still buffered for stdout cannot be written: send it nowhere, or Python reports
    the failed flush again at exit (as the Python docs advise for SIGPIPE)."""
    if sys.stdout is None:
        return
    try:
        sys.stdout.flush()
    except OSError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


def run_mcp(args: argparse.Namespace) -> int:
    from .locate import locate

    db, roots = locate(args, True)
    if args.print_token or args.http:
        # Light imports only until the token is written: the MCP SDK takes seconds to load.
        from ..mcp.http import ensure_token, serve_http
        from ..review.where import prepared_local_file

        # The token lives beside an SQLite store; with PostgreSQL, in this checkout's .stet/.
        beside = prepared_local_file(db, roots[0])
        token = ensure_token(beside)
        if args.print_token:
            print(token)
            return 0
        serve_http(db, roots, args.http, agent=args.agent, token_beside=beside)
        return 0
    from ..mcp.stdio import serve_stdio

    return 130 if serve_stdio(db, roots, agent=args.agent) else 0


if __name__ == "__main__":
    sys.exit(main())
