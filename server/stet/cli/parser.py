"""The `stet` argument parser: every command of the operations table, its options and its help.

Each subcommand's parser is added by the function its row names (`Operation.cli_args`): here
for the review's commands, in cli/tasks.py, cli/capture.py and cli/integrate.py for theirs."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import sys

from ..operations import CLI

TYPE_CHECKING = False  # no `typing` at the CLI's start
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import TextIO

    from _typeshed import SupportsWrite

    from .call import Call

DEFAULT_EXPORT = ("accepted", "applied")


def _components(value: str) -> int:
    """-p N: a count of path components, 0 or more."""
    try:
        n = int(value)
    except ValueError:
        n = -1
    if n < 0:
        raise argparse.ArgumentTypeError(f"{value!r} is not a count of path components (0 or more)")
    return n


def _positive(value: str) -> int:
    n = _count(value)
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, not {value}")
    return n


def _count(value: str) -> int:
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {value!r}") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"must not be negative: {value}")
    return n


COMMANDS = list(CLI)  # every subcommand, in the order `stet --help` lists them


def command_in(argv: list[str]) -> str | None:
    """The command an argument list names (after the global --db / --root), if it names one."""
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg in ("--db", "--root"):
            i += 2
            continue
        if arg.startswith(("--db=", "--root=")):
            i += 1
            continue
        return arg if arg in COMMANDS else None
    return None


class Parents:
    """The options several commands share, as argparse parent parsers."""

    def __init__(
        self, common: argparse.ArgumentParser, as_json: argparse.ArgumentParser, mutation: argparse.ArgumentParser
    ) -> None:
        self.common, self.as_json, self.mutation = common, as_json, mutation


def _parents() -> Parents:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--db",
        default=argparse.SUPPRESS,
        help="the review store (default: the nearest .stet/stet.db above the current folder; or STET_DB)",
    )
    common.add_argument(
        "--root",
        action="append",
        default=argparse.SUPPRESS,
        help="a workspace root (default: the folder holding .stet/); repeat it for every folder of a "
        "multi-root workspace, the first one first (patch paths are relative to it)",
    )
    as_json = argparse.ArgumentParser(add_help=False)
    as_json.add_argument("--json", action="store_true", help="print JSON (for scripts and agents)")
    mutation = argparse.ArgumentParser(add_help=False)
    mutation.add_argument(
        "--request-id", help="an id for this call: repeating it returns the first answer and changes nothing"
    )
    return Parents(common, as_json, mutation)


TYPE_CHECKING = False  # no `typing` at the CLI's start
if TYPE_CHECKING:
    from typing import Any

    # What adds a subcommand's parser (operations.Operation.cli_args) gets these and its name.
    Sub = argparse._SubParsersAction[Any]


def add_serve(sub: Sub, _: Parents, name: str) -> None:
    p = sub.add_parser(name, help="run the language server on stdio (one per editor window)")
    p.add_argument(
        "--db", default=argparse.SUPPRESS, help="the review store (default: <workspace>/.stet/stet.db; or STET_DB)"
    )


def add_demo(sub: Sub, _: Parents, name: str) -> None:
    p = sub.add_parser(name, help="a self-contained tour: propose, review, kill -9, restart, same state")
    p.add_argument("--keep", action="store_true", help="keep the temporary workspace")


def add_propose(sub: Sub, o: Parents, name: str) -> None:
    p = sub.add_parser(
        name,
        parents=[o.common, o.as_json],
        help="hand in an agent's change: a unified diff or a WorkspaceEdit",
        description="Propose a change for review. The proposal id makes it idempotent: the same id with the same "
        "change adds nothing (without --id, the id is derived from the content). Nothing is written to the files.",
    )
    src = p.add_mutually_exclusive_group()
    src.add_argument("--patch", metavar="FILE", help="a unified diff as `git diff` writes it ('-': stdin)")
    src.add_argument(
        "--edit", metavar="FILE", help="a WorkspaceEdit JSON, or a stet/propose params object ('-': stdin)"
    )
    p.add_argument("--id", help="the proposal id (default: derived from the content)")
    p.add_argument("--task", help="the agent's task id")
    p.add_argument("--agent", help="the agent's name")
    p.add_argument("--message", "-m", help="the agent's rationale, shown to the developer")
    p.add_argument(
        "--strip",
        "-p",
        type=_components,
        default=1,
        metavar="N",
        help="leading path components to strip (default 1: a/ b/)",
    )


def add_status(sub: Sub, o: Parents, name: str) -> None:
    p = sub.add_parser(
        name,
        parents=[o.common, o.as_json],
        help="hunks by file and status",
        description="Open hunks (pending, accepted, stale, and applied ones whose text is no longer in the file) "
        "by file; --all lists every hunk. --task, --proposal and --file narrow the list and its counts.",
    )
    p.add_argument("--all", action="store_true", help="list decided hunks too (applied, rejected, superseded)")
    p.add_argument("--status", action="append", metavar="S[,S]", help="only these statuses")
    p.add_argument("--proposal", help="only this proposal")
    p.add_argument("--task", help="only this task")
    p.add_argument("--file", metavar="PATH", help="only this file")
    p.add_argument(
        "--turn",
        metavar="TURN",
        help="only the hunks a Claude Code turn's hooks captured: `last` (the latest turn), N (turn N of the "
        "latest session) or SESSION:N",
    )


def add_show(sub: Sub, o: Parents, name: str) -> None:
    text = "a hunk's changed lines, numbered as --old (-1..-m) and --new (+1..+n) of accept and reject take them"
    p = sub.add_parser(name, parents=[o.common, o.as_json], help=text, description=text)
    p.add_argument("id", metavar="HUNK_ID", help="a hunk id (see `stet status`)")


def line_list(value: str) -> list[list[int]]:
    """--old / --new: 1-based line numbers and ranges, comma-separated (`1,3-4`), as 0-based
    inclusive [first, last] ranges."""
    out = []
    for item in value.split(","):
        first, dash, last = item.strip().partition("-")
        try:
            a, b = int(first), int(last) if dash else int(first)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not line numbers and ranges like 1,3-4: {value!r}") from None
        if a < 1 or b < a:
            raise argparse.ArgumentTypeError(f"{item.strip()!r}: lines are numbered from 1, a range as FIRST-LAST")
        out.append([a - 1, b - 1])
    return out


def add_log(sub: Sub, o: Parents, name: str) -> None:
    p = sub.add_parser(name, parents=[o.common, o.as_json], help="the operation log (every proposal and decision)")
    p.add_argument("--since", type=_count, default=0, metavar="LSN", help="only operations after this lsn")
    p.add_argument("--limit", type=_positive, metavar="N", help="only the last N operations (N >= 1)")


def add_decision(sub: Sub, o: Parents, name: str) -> None:
    decision = CLI[name].decision
    assert decision is not None
    text = decision.help
    p = sub.add_parser(name, parents=[o.common, o.as_json, o.mutation], help=text, description=text)
    p.add_argument("ids", nargs="*", metavar="HUNK_ID", help="hunk ids (see `stet status`)")
    if len(decision.scopes) > 1:
        p.add_argument("--feedback", help="the developer's words for the agent")
        p.add_argument("--file", help=f"{name} every pending hunk of this file")
        p.add_argument("--proposal", help=f"{name} every pending hunk of this proposal")
        p.add_argument("--task", help=f"{name} every pending hunk of this task")
    if "lines" in decision.scopes:
        lines = "1-based, comma-separated numbers and ranges (1,3-4) as `stet show` numbers them"
        p.add_argument(
            "--old", type=line_list, metavar="LIST", help=f"{name} only these old lines of one hunk: {lines}"
        )
        p.add_argument(
            "--new", type=line_list, metavar="LIST", help=f"{name} only these new lines of one hunk: {lines}"
        )


def add_pull(sub: Sub, o: Parents, name: str) -> None:
    text = (
        "bring the review's applied hunks into this checkout (a review shared in PostgreSQL by several "
        "checkouts: the developer accepted them elsewhere); each lands once, where its old text still is"
    )
    p = sub.add_parser(name, parents=[o.common, o.as_json, o.mutation], help=text, description=text)
    p.add_argument("--task", help="only the hunks of this task")


def add_export(sub: Sub, o: Parents, name: str) -> None:
    p = sub.add_parser(
        name,
        parents=[o.common, o.as_json],
        help="hunks as a unified diff that `git apply` takes",
        description="Print the chosen hunks as a unified diff. For hunks not yet in the files (pending, accepted) "
        "it applies to the files as they are; for applied hunks it applies to the files as they were before "
        "(`git apply -R --check` confirms they are in).",
    )
    p.add_argument(
        "--status",
        action="append",
        metavar="S[,S]",
        help=f"only these statuses (default: {','.join(DEFAULT_EXPORT)})",
    )
    p.add_argument("--proposal", help="only this proposal")
    p.add_argument("--task", help="only this task")
    p.add_argument("--output", "-o", metavar="FILE", help="write the diff to FILE instead of stdout")


def add_doctor(sub: Sub, o: Parents, name: str) -> None:
    p = sub.add_parser(name, parents=[o.common, o.as_json], help="check the store and the workspace; say what to do")
    p.add_argument(
        "--fix",
        action="store_true",
        help="finish pending effects, re-check hunks against the files, remove temp files",
    )


def add_init(sub: Sub, o: Parents, name: str) -> None:
    sub.add_parser(
        name,
        parents=[o.common],
        help="create the workspace's .stet/ (the store, the inbox); prints the store's path",
        description="Create .stet/ in the workspace root (--root, else the current folder): the review store "
        "and the inbox folders. Running it again changes nothing.",
    )


def add_watch(sub: Sub, o: Parents, name: str) -> None:
    sub.add_parser(
        name,
        parents=[o.common],
        help="without an editor: ingest the inbox, re-check files changed outside, finish journaled edits",
        description="The headless runner for agents without an editor: ingests .stet/inbox/, re-checks hunks of "
        "files changed outside Stet, and finishes edits other processes decided but did not write, until "
        "interrupted (Ctrl-C or SIGTERM stop it cleanly).",
    )


# The streams of the call being parsed: argparse writes help, usage and errors to sys.stdout and
# sys.stderr, which are the process's, not the call's. A parse never awaits, so no other call of
# the event loop parses meanwhile (and `contextvars` is not loaded at the CLI's start for this).
_STREAMS: list[tuple[TextIO | None, TextIO | None]] = []


@contextlib.contextmanager
def printing_to(call: Call) -> Iterator[None]:
    """What the parser prints during the block (which must not await) goes to the call's streams."""
    _STREAMS.append((call.stdout, call.stderr))
    try:
        yield
    finally:
        _STREAMS.pop()


class Parser(argparse.ArgumentParser):
    """argparse's parser printing to the call's streams (its subcommands' parsers are of its class)."""

    def _print_message(self, message: str, file: SupportsWrite[str] | None = None) -> None:
        streams = _STREAMS[-1] if _STREAMS else None
        if streams is not None:
            file = streams[0] if file is sys.stdout else streams[1]  # argparse's default is stderr
            if file is None:
                return
        super()._print_message(message, file)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The `stet` parser. With `only` (a command), just that command's parser is built: a
    command's process starts sooner than when all of them, with their help, are made first
    (`stet --help`, or a command that is not one, builds them all)."""
    o = _parents()
    parser = Parser(
        prog="stet",
        description="Review an AI coding agent's edits hunk by hunk, durably.",
        epilog="Exit codes: 0 success, 1 refused (conflict, unknown hunk), 2 bad usage or input.",
        parents=[o.common],
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, op in CLI.items():
        if only is None or only == name:
            module, _, add = op.cli_args.rpartition(".")
            getattr(importlib.import_module(f"{__package__}.{module}"), add)(sub, o, name)
    return parser
