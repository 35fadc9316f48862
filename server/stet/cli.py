"""The `stet` command line: the agent's side of the desk, and the developer's terminal.

Each command opens the workspace's store and uses the same `Review` service as the
language server, so a decision made here is journaled and carried out exactly once, like
one made in the editor (with no editor, files are written atomically by the service).
Exit codes: 0 success, 1 refused (Conflict, UnknownHunk), 2 bad usage or input.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from contextlib import asynccontextmanager
from pathlib import Path
from typing import AsyncIterator

from . import taskcli
from .errors import Conflict, InvalidParams, StetError, UnknownHunk
from .domain.text import lone_surrogate

STORE_DIR = ".stet"
STORE_FILE = "stet.db"
DEFAULT_EXPORT = ("accepted", "applied")


class Usage(StetError):
    """Bad usage: exit 2."""

    name = "Usage"


def exit_code(exc: StetError) -> int:
    return 1 if isinstance(exc, (Conflict, UnknownHunk)) else 2


# --- finding the store -----------------------------------------------------------------
def find_store(start: str) -> str | None:
    """The nearest `.stet/stet.db` at or above `start`, like git finds `.git`."""
    here = Path(start).resolve()
    for folder in (here, *here.parents):
        candidate = folder / STORE_DIR / STORE_FILE
        if candidate.is_file():
            return str(candidate)
    return None


def _project_root(start: str) -> str:
    """Where a new store goes: the enclosing git work tree, else the current folder."""
    here = Path(start).resolve()
    for folder in (here, *here.parents):
        if (folder / ".git").exists():
            return str(folder)
    return str(here)


def locate(args: argparse.Namespace, create: bool) -> tuple[str, list[str]]:
    """(database path, workspace roots) from --db / STET_DB / walking up; --root sets the roots.

    The first root is the one patch paths are relative to; more `--root`s are the other
    folders of a multi-root workspace (the store lives in the first one's .stet/).
    """
    db = getattr(args, "db", None) or os.environ.get("STET_DB")
    roots = list(getattr(args, "root", None) or [])
    cwd = os.getcwd()
    if db:
        db = os.path.abspath(db)
        if not create and not os.path.isfile(db):
            raise Usage(f"no review store at {db}")
    else:
        db = find_store(cwd)
        if db is None:
            if not create:
                raise Usage(
                    f"no Stet store found in {cwd} or above (looked for {STORE_DIR}/{STORE_FILE}). "
                    "Run this inside a workspace Stet has seen, or pass --db PATH (or set STET_DB)."
                )
            db = os.path.join(roots[0] if roots else _project_root(cwd), STORE_DIR, STORE_FILE)
    if not roots:
        folder = os.path.dirname(db)
        roots = [os.path.dirname(folder) if os.path.basename(folder) == STORE_DIR else cwd]
    for root in roots:
        if not os.path.isdir(root):
            raise Usage(f"the workspace root {root} is not a folder")
    return db, [os.path.realpath(r) for r in roots]


class _NoEditor:
    """The CLI has no editor: the review writes files itself."""

    async def apply_edit(self, uri, version, edits, label) -> bool:
        return False


@asynccontextmanager
async def opened(args: argparse.Namespace, create: bool = False) -> AsyncIterator:
    from .review import Review
    from .store import Store
    from .workspace import Workspace

    db, roots = locate(args, create)
    result = await Store.open(db)
    if result.notice:
        print(f"stet: {result.notice}", file=sys.stderr)
    review = Review(Workspace(roots), _NoEditor(), lambda uris: None)
    review.store = result.store
    try:
        await review.sync()
        review.ready.set()
        yield review
    finally:
        await review.close()


# --- printing --------------------------------------------------------------------------
_COLOURS = {"pending": "33", "accepted": "36", "applied": "32", "rejected": "31", "stale": "35", "superseded": "2"}


def _colour() -> bool:
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"


def _paint(text: str, status: str) -> str:
    code = _COLOURS.get(status)
    return f"\x1b[{code}m{text}\x1b[0m" if code and _colour() else text


def _rel(review, uri: str) -> str:
    from .workspace import uri_to_path

    try:
        path = uri_to_path(uri)
    except StetError:
        return uri
    root = review.ws.roots[0]
    return os.path.relpath(path, root) if path.startswith(root.rstrip("/") + "/") else path


def _table(rows: list[list[str]], status_col: int | None = None) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out = []
    for n, r in enumerate(rows):
        cells = []
        for i, cell in enumerate(r):
            text = cell.ljust(widths[i]) if i < len(r) - 1 else cell
            if n and i == status_col:
                text = _paint(text, cell)
            cells.append(text)
        out.append("  ".join(cells).rstrip())
    return "\n".join(out)


def _one_line(text: str | None, width: int = 60) -> str:
    if not text:
        return ""
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _hunk_rows(review, hunks, with_file: bool = True) -> list[list[str]]:
    rows = [["HUNK", "STATUS"] + (["FILE"] if with_file else []) + ["LINE", "CHANGE", "MESSAGE / FEEDBACK"]]
    for h in hunks:
        where = _rel(review, h.uri) + (f" -> {_rel(review, h.new_uri)}" if h.new_uri else "")
        change = h.kind if h.kind != "edit" else f"-{len(h.old)} +{len(h.replacement)}"
        note = f"feedback: {h.feedback}" if h.feedback else h.message
        rows.append([h.id, h.status.value] + ([where] if with_file else []) + [str(h.line + 1), change, _one_line(note)])
    return rows


def _print_json(data) -> None:
    print(json.dumps(data, indent=2, ensure_ascii=False))


def _print_hunks(review, states_or_hunks, as_json: bool, extra: dict | None = None) -> None:
    hunks = [review.hunks[s["id"]] if isinstance(s, dict) else s for s in states_or_hunks]
    if as_json:
        _print_json({**(extra or {}), "hunks": [h.state() for h in hunks]})
        return
    if hunks:
        print(_table(_hunk_rows(review, hunks), status_col=1))
    else:
        print("no hunks")


# --- input -----------------------------------------------------------------------------
def _read_input(name: str) -> str:
    try:
        data = sys.stdin.buffer.read() if name == "-" else Path(name).read_bytes()
    except OSError as exc:
        raise Usage(f"cannot read {name}: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidParams(f"{name}: not UTF-8 text (byte {exc.start}): binary input is not accepted") from None


# --- commands --------------------------------------------------------------------------
async def cmd_propose(args) -> int:
    from . import intake

    if bool(args.patch) == bool(args.edit):
        raise Usage("give exactly one of --patch FILE and --edit FILE ('-' reads stdin)")
    text = _read_input(args.patch or args.edit)
    # Bad input is refused before the store is even opened (or created): nothing is written.
    if args.patch:
        intake.check_patch_text(text, args.strip)
    else:
        try:
            json.loads(text)
        except json.JSONDecodeError as exc:
            raise InvalidParams(f"{args.edit}: not JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    async with opened(args, create=True) as review:
        notes: list[str] = []
        if args.patch:
            answer, notes = await intake.propose_patch(
                review, text, args.id, task_id=args.task, agent=args.agent, message=args.message, strip=args.strip
            )
        else:
            try:
                data = json.loads(text)
            except json.JSONDecodeError as exc:
                raise InvalidParams(f"{args.edit}: not JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
            if isinstance(data, dict) and "edit" in data:  # a whole stet/propose params object
                params = {**data}
                for key, value in (("taskId", args.task), ("agent", args.agent), ("message", args.message)):
                    if value is not None:
                        params[key] = value
                if args.id:
                    params["proposalId"] = args.id
                elif "proposalId" not in params:
                    params["proposalId"] = intake.default_id("edit", text)
            else:
                params = {
                    "proposalId": args.id or intake.default_id("edit", text),
                    "edit": data,
                    "taskId": args.task,
                    "agent": args.agent,
                    "message": args.message,
                }
            answer = await intake.propose_params(review, params)
        for note in notes:
            print(f"stet: note: {note}", file=sys.stderr)
        if args.json:
            _print_json(answer)
        else:
            print(f"proposal {answer['proposalId']}: {len(answer['hunks'])} hunk(s)")
            _print_hunks(review, answer["hunks"], False)
            # Within a task, repeats of earlier hunks are not proposed again (docs/tasks.md).
            if answer.get("alreadyProposed"):
                print(f"already proposed in this task, not again: {' '.join(h['id'] for h in answer['alreadyProposed'])}")
            for h in answer.get("rejectedBefore", ()):
                print(f"rejected before by the developer, not proposed again: {h['id']} {_rel(review, h['uri'])}: "
                      f"{_one_line(h['feedback'], 200) or '(no feedback)'}")
    return 0


def _statuses(values: list[str] | None, default=None):
    from .domain.status import Status

    if not values:
        return default
    names = [v.strip() for value in values for v in value.split(",") if v.strip()]
    try:
        return {Status(n) for n in names}
    except ValueError:
        raise Usage(f"unknown status in {', '.join(names)}: use {', '.join(s.value for s in Status)}") from None


async def cmd_status(args) -> int:
    from .domain.status import OPEN

    async with opened(args) as review:
        statuses = _statuses(args.status, None if args.all else OPEN)
        hunks = review.list(statuses=statuses, proposal_id=args.proposal, task_id=args.task)
        counts = review.counts()
        if args.json:
            _print_json({"root": review.ws.roots[0], "db": review.store.path, "counts": counts, "hunks": [h.state() for h in hunks]})
            return 0
        summary = ", ".join(_paint(f"{n} {s}", s) for s, n in counts.items() if n)
        print(f"{review.ws.roots[0]}: {summary or 'no hunks'}")
        by_file: dict[str, list] = {}
        for h in hunks:
            by_file.setdefault(h.uri, []).append(h)
        for uri, group in by_file.items():
            tally = {}
            for h in group:
                tally[h.status.value] = tally.get(h.status.value, 0) + 1
            print()
            print(f"{_rel(review, uri)}  ({', '.join(f'{n} {s}' for s, n in tally.items())})")
            rows = _hunk_rows(review, group, with_file=False)
            print("  " + _table(rows, status_col=1).replace("\n", "\n  "))
        if not hunks and any(counts.values()) and not args.all:
            print("nothing open; `stet status --all` lists decided hunks too")
    return 0


async def cmd_log(args) -> int:
    async with opened(args) as review:
        ops = await review.store.ops(after_lsn=args.since, limit=10**9)
        if args.limit:
            ops = ops[-args.limit :]
        if args.json:
            _print_json({"ops": [{"lsn": o.lsn, "opId": o.op_id, "kind": o.kind, "args": o.args, "result": o.result, "at": o.at} for o in ops]})
            return 0
        rows = [["LSN", "AT", "KIND", "OP", "WHAT"]]
        for o in ops:
            what = []
            if o.args.get("proposalId"):
                what.append(f"proposal {o.args['proposalId']}")
            ids = o.args.get("hunkIds") or ((o.result or {}).get("hunkIds") if isinstance(o.result, dict) else None)
            if ids:
                what.append(f"{len(ids)} hunk(s): {' '.join(ids[:4])}{' …' if len(ids) > 4 else ''}")
            if o.args.get("feedback"):
                what.append(f"feedback: {_one_line(o.args['feedback'], 40)}")
            rows.append([str(o.lsn), o.at, o.kind, o.op_id, "; ".join(what)])
        print(_table(rows) if ops else "the operation log is empty")
    return 0


async def cmd_decide(args) -> int:
    action = args.command
    scopes = [bool(args.ids), bool(getattr(args, "file", None)), bool(getattr(args, "proposal", None) or getattr(args, "task", None))]
    if sum(scopes) != 1:
        raise Usage(f"give hunk ids, or one of --file / --proposal / --task, to {action}")
    async with opened(args) as review:
        common = dict(request_id=args.request_id, feedback=getattr(args, "feedback", None))
        if args.ids:
            states = await review.decide(action, args.ids, **common)
        elif getattr(args, "file", None):
            path = os.path.abspath(args.file)
            states = await review.decide(action, uri=Path(path).as_uri(), **common)
        else:
            states = await review.decide(action, proposal_id=args.proposal, task_id=args.task, **common)
        _print_hunks(review, states, args.json)
    return 0


async def cmd_export(args) -> int:
    from .export import export
    from .workspace import read_text

    async with opened(args) as review:
        statuses = _statuses(args.status, None) or {s for s in _statuses(list(DEFAULT_EXPORT))}
        hunks = review.list(statuses=statuses, proposal_id=args.proposal, task_id=args.task)

        def read(uri: str) -> str | None:
            try:
                return read_text(review.ws.resolve(uri))
            except StetError:
                return None

        result = await asyncio.to_thread(export, hunks, lambda u: _rel(review, u), read)
        diff, ids, skipped = result.diff, result.hunk_ids, result.skipped
        for hid, why in skipped:
            print(f"stet: skipped hunk {hid}: {why}", file=sys.stderr)
        if args.output:
            Path(args.output).write_text(diff, encoding="utf-8", newline="")
        if args.json:
            _print_json({"diff": diff, "hunkIds": ids, "skipped": [{"id": i, "why": w} for i, w in skipped]})
        elif not args.output:
            sys.stdout.write(diff)
            sys.stdout.flush()
    return 0


async def cmd_doctor(args) -> int:
    from .doctor import examine

    async with opened(args) as review:
        report = await examine(review, fix=args.fix)
    if args.json:
        _print_json(report)
    else:
        for item in report["findings"]:
            mark = {"ok": "ok  ", "warn": "WARN", "problem": "FAIL", "fixed": "FIX "}[item["level"]]
            print(f"[{mark}] {item['what']}")
            if item.get("todo"):
                print(f"       -> {item['todo']}")
    return 1 if any(f["level"] in ("warn", "problem") for f in report["findings"]) else 0


# --- the parser ------------------------------------------------------------------------
def _parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--db", default=argparse.SUPPRESS, help="the review store (default: the nearest .stet/stet.db above the current folder; or STET_DB)")
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
    mutation.add_argument("--request-id", help="an id for this call: repeating it returns the first answer and changes nothing")

    parser = argparse.ArgumentParser(
        prog="stet",
        description="Review an AI coding agent's edits hunk by hunk, durably.",
        epilog="Exit codes: 0 success, 1 refused (conflict, unknown hunk), 2 bad usage or input.",
        parents=[common],
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("serve", help="run the language server on stdio (one per editor window)")
    p.add_argument("--db", default=argparse.SUPPRESS, help="the review store (default: <workspace>/.stet/stet.db; or STET_DB)")
    p = sub.add_parser("demo", help="a self-contained tour: propose, review, kill -9, restart, same state")
    p.add_argument("--keep", action="store_true", help="keep the temporary workspace")

    p = sub.add_parser(
        "propose",
        parents=[common, as_json],
        help="hand in an agent's change: a unified diff or a WorkspaceEdit",
        description="Propose a change for review. The proposal id makes it idempotent: the same id with the same "
        "change adds nothing (without --id, the id is derived from the content). Nothing is written to the files.",
    )
    src = p.add_mutually_exclusive_group()
    src.add_argument("--patch", metavar="FILE", help="a unified diff as `git diff` writes it ('-': stdin)")
    src.add_argument("--edit", metavar="FILE", help="a WorkspaceEdit JSON, or a stet/propose params object ('-': stdin)")
    p.add_argument("--id", help="the proposal id (default: derived from the content)")
    p.add_argument("--task", help="the agent's task id")
    p.add_argument("--agent", help="the agent's name")
    p.add_argument("--message", "-m", help="the agent's rationale, shown to the developer")
    p.add_argument("--strip", "-p", type=int, default=1, metavar="N", help="leading path components to strip (default 1: a/ b/)")

    p = sub.add_parser("status", parents=[common, as_json], help="hunks by file and status")
    p.add_argument("--all", action="store_true", help="list decided hunks too (applied, rejected, superseded)")
    p.add_argument("--status", action="append", metavar="S[,S]", help="only these statuses")
    p.add_argument("--proposal", help="only this proposal")
    p.add_argument("--task", help="only this task")

    p = sub.add_parser("log", parents=[common, as_json], help="the operation log (every proposal and decision)")
    p.add_argument("--since", type=int, default=0, metavar="LSN", help="only operations after this lsn")
    p.add_argument("--limit", type=int, default=0, metavar="N", help="only the last N operations")

    for name, text in (
        ("accept", "accept hunks: the edit is written into the file, exactly once"),
        ("reject", "reject hunks, optionally saying why (--feedback)"),
        ("undo", "back to pending; an applied hunk's edit is reverted"),
    ):
        p = sub.add_parser(name, parents=[common, as_json, mutation], help=text, description=text)
        p.add_argument("ids", nargs="*", metavar="HUNK_ID", help="hunk ids (see `stet status`)")
        if name != "undo":
            p.add_argument("--feedback", help="the developer's words for the agent")
            p.add_argument("--file", help=f"{name} every pending hunk of this file")
            p.add_argument("--proposal", help=f"{name} every pending hunk of this proposal")
            p.add_argument("--task", help=f"{name} every pending hunk of this task")

    p = sub.add_parser(
        "export",
        parents=[common, as_json],
        help="hunks as a unified diff that `git apply` takes",
        description="Print the chosen hunks as a unified diff. For hunks not yet in the files (pending, accepted) "
        "it applies to the files as they are; for applied hunks it applies to the files as they were before "
        "(`git apply -R --check` confirms they are in).",
    )
    p.add_argument("--status", action="append", metavar="S[,S]", help=f"only these statuses (default: {','.join(DEFAULT_EXPORT)})")
    p.add_argument("--proposal", help="only this proposal")
    p.add_argument("--task", help="only this task")
    p.add_argument("--output", "-o", metavar="FILE", help="write the diff to FILE instead of stdout")

    p = sub.add_parser("doctor", parents=[common, as_json], help="check the store and the workspace; say what to do")
    p.add_argument("--fix", action="store_true", help="finish pending effects, re-check hunks against the files, remove temp files")

    taskcli.add_commands(sub, common, as_json, mutation)  # task, resume, mcp
    return parser


COMMANDS = {
    "propose": cmd_propose,
    "status": cmd_status,
    "log": cmd_log,
    "accept": cmd_decide,
    "reject": cmd_decide,
    "undo": cmd_decide,
    "export": cmd_export,
    "doctor": cmd_doctor,
    "task": taskcli.cmd_task,
    "resume": taskcli.cmd_resume,
}


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    for name, value in vars(args).items():
        # Bytes that are not UTF-8 reach argv as surrogate escapes: refuse them before the store sees them.
        if lone_surrogate(value) is not None:
            print(f"stet: InvalidParams: the {name.replace('_', '-')} argument is not UTF-8 text", file=sys.stderr)
            return 2
    if args.command == "serve":
        from .lsp.server import serve

        serve(getattr(args, "db", None))
        return 0
    if args.command == "demo":
        from .demo import run_demo

        return run_demo(keep=args.keep)
    try:
        if args.command == "mcp":
            return taskcli.cmd_mcp(args)
        return asyncio.run(COMMANDS[args.command](args))
    except StetError as exc:
        if getattr(args, "json", False):
            _print_json({"error": {"code": exc.code, "name": exc.name, "message": exc.message, "data": exc.data}})
        print(f"stet: {exc.name}: {exc.message}", file=sys.stderr)
        return exit_code(exc)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `stet log | head`
        return 0


if __name__ == "__main__":
    sys.exit(main())
