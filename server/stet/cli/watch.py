"""`stet init` (a workspace's .stet/ with its inbox) and `stet watch` (the headless runner)."""

from __future__ import annotations

import asyncio
import os
import signal
import sys

from ..workspace import own
from .locate import STORE_DIR, STORE_FILE, Usage
from .session import opened

TYPE_CHECKING = False  # types for mypy only
if TYPE_CHECKING:
    import argparse


def _root(args: argparse.Namespace) -> str:
    roots = list(getattr(args, "root", None) or [])
    root = os.path.realpath(roots[0] if roots else os.getcwd())
    if not os.path.isdir(root):
        raise Usage(f"the workspace root {root} is not a folder")
    return root


async def cmd_init(args: argparse.Namespace) -> int:
    # The store named by --db or STET_DB (a shared PostgreSQL review, say), else the folder's own.
    db = getattr(args, "db", None) or os.environ.get("STET_DB") or os.path.join(_root(args), STORE_DIR, STORE_FILE)
    args.db = db
    async with opened(args, create=True) as review:
        inbox = os.path.join(review.require_store().home, "inbox")
        for names in ((), ("done",), ("failed",)):
            own.make(review.require_store().home, "inbox", *names)  # 0700, Stet's own (no symlink...)
        print(review.require_store().path)
    print(f"stet: inbox {inbox}; run `stet watch` to ingest it without an editor", file=sys.stderr)
    return 0


async def cmd_watch(args: argparse.Namespace) -> int:
    from ..runtime.collector import tune_for_a_long_run
    from ..runtime.headless import Headless

    tune_for_a_long_run()
    async with opened(args) as review:
        runner = Headless(review)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        print(
            f"stet: watching {review.ws.roots[0]} (inbox, outside changes, journaled edits); "
            "stop with Ctrl-C or SIGTERM",
            file=sys.stderr,
            flush=True,
        )
        if runner.warning:
            print(f"stet: {runner.warning}", file=sys.stderr)
        await runner.run(stop)
        print(f"stet: stopped ({runner.inbox.ingested} inbox file(s) ingested)", file=sys.stderr)
    return 0
