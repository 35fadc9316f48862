"""The `stet` command line."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from contextlib import asynccontextmanager
from pathlib import Path
from typing import AsyncIterator

from .errors import Conflict, StetError, UnknownHunk

# Interim, until the CLI framework (branch `cli`) lands: the same names and behaviour as
# there (`locate`, `opened`, exit codes), so the task commands plug into it unchanged.
STORE_DIR = ".stet"
STORE_FILE = "stet.db"


class Usage(StetError):
    """Bad usage: exit 2."""

    name = "Usage"


def exit_code(exc: StetError) -> int:
    return 1 if isinstance(exc, (Conflict, UnknownHunk)) else 2


def find_store(start: str) -> str | None:
    """The nearest `.stet/stet.db` at or above `start`, like git finds `.git`."""
    here = Path(start).resolve()
    for folder in (here, *here.parents):
        candidate = folder / STORE_DIR / STORE_FILE
        if candidate.is_file():
            return str(candidate)
    return None


def _project_root(start: str) -> str:
    here = Path(start).resolve()
    for folder in (here, *here.parents):
        if (folder / ".git").exists():
            return str(folder)
    return str(here)


def locate(args: argparse.Namespace, create: bool) -> tuple[str, str]:
    """(database path, workspace root) from --db / STET_DB / walking up; --root overrides the root."""
    db = getattr(args, "db", None) or os.environ.get("STET_DB")
    root = getattr(args, "root", None)
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
            db = os.path.join(root or _project_root(cwd), STORE_DIR, STORE_FILE)
    if root is None:
        folder = os.path.dirname(db)
        root = os.path.dirname(folder) if os.path.basename(folder) == STORE_DIR else cwd
    if not os.path.isdir(root):
        raise Usage(f"the workspace root {root} is not a folder")
    return db, os.path.realpath(root)


class _NoEditor:
    """The CLI has no editor: the review writes files itself."""

    async def apply_edit(self, uri, version, edits, label) -> bool:
        return False


@asynccontextmanager
async def opened(args: argparse.Namespace, create: bool = False) -> AsyncIterator:
    from .review import Review
    from .store import Store
    from .workspace import Workspace

    db, root = locate(args, create)
    result = await Store.open(db)
    if result.notice:
        print(f"stet: {result.notice}", file=sys.stderr)
    review = Review(Workspace([root]), _NoEditor(), lambda uris: None)
    review.store = result.store
    try:
        await review.sync()
        review.ready.set()
        yield review
    finally:
        await review.close()


def _parser() -> argparse.ArgumentParser:
    from . import taskcli

    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--db", default=argparse.SUPPRESS, help="the review store (default: the nearest .stet/stet.db above the current folder; or STET_DB)")
    common.add_argument("--root", default=argparse.SUPPRESS, help="the workspace root (default: the folder holding .stet/)")
    as_json = argparse.ArgumentParser(add_help=False)
    as_json.add_argument("--json", action="store_true", help="print JSON (for scripts and agents)")
    mutation = argparse.ArgumentParser(add_help=False)
    mutation.add_argument("--request-id", help="an id for this call: repeating it returns the first answer and changes nothing")

    parser = argparse.ArgumentParser(
        prog="stet",
        description="Review an AI coding agent's edits hunk by hunk, durably.",
        epilog="Exit codes: 0 success, 1 refused (conflict, unknown hunk or task), 2 bad usage or input.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    p_serve = sub.add_parser("serve", help="run the language server on stdio (one per editor window)")
    p_serve.add_argument("--db", help="the review store (default: <workspace>/.stet/stet.db; or STET_DB)")
    p_demo = sub.add_parser("demo", help="a self-contained tour: propose, review, kill -9, restart, same state")
    p_demo.add_argument("--keep", action="store_true", help="keep the temporary workspace")
    taskcli.add_commands(sub, common, as_json, mutation)
    return parser


def main(argv: list[str] | None = None) -> int:
    from . import taskcli

    args = _parser().parse_args(argv)
    if args.command == "serve":
        from .lsp.server import serve

        serve(args.db)
        return 0
    if args.command == "demo":
        from .demo import run_demo

        return run_demo(keep=args.keep)
    try:
        if args.command == "mcp":
            return taskcli.cmd_mcp(args, locate)
        command = {"task": taskcli.cmd_task, "resume": taskcli.cmd_resume}[args.command]
        return asyncio.run(command(args, opened))
    except StetError as exc:
        if getattr(args, "json", False):
            print(json.dumps({"error": {"code": exc.code, "name": exc.name, "message": exc.message, "data": exc.data}}, indent=2))
        print(f"stet: {exc.name}: {exc.message}", file=sys.stderr)
        return exit_code(exc)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
