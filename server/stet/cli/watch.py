"""`stet init` (a workspace's .stet/ with its inbox) and `stet watch` (the headless runner)."""

from __future__ import annotations

import asyncio
import os
import signal

from ..review.where import STORE_DIR, STORE_FILE
from ..workspace import own
from .locate import Usage
from .session import opened

TYPE_CHECKING = False  # types for mypy only
if TYPE_CHECKING:
    import argparse

    from .call import Call


def _root(args: argparse.Namespace, call: Call) -> str:
    roots = list(getattr(args, "root", None) or [])
    root = os.path.realpath(call.path(roots[0]) if roots else call.cwd)
    if not os.path.isdir(root):
        raise Usage(f"the workspace root {root} is not a folder")
    return root


async def cmd_init(args: argparse.Namespace, call: Call) -> int:
    # The store named by --db or STET_DB (a shared PostgreSQL review, say), else the folder's own.
    db = getattr(args, "db", None) or call.env.get("STET_DB") or os.path.join(_root(args, call), STORE_DIR, STORE_FILE)
    args.db = db
    async with opened(args, call, create=True) as review:
        inbox = os.path.join(review.require_store().home, "inbox")
        for names in ((), ("done",), ("failed",)):
            own.make(review.require_store().home, "inbox", *names)  # 0700, Stet's own (no symlink...)
        call.out(review.require_store().path)
    call.say(f"stet: inbox {inbox}; run `stet watch` to ingest it without an editor")
    return 0


async def cmd_watch(args: argparse.Namespace, call: Call) -> int:
    from ..runtime.collector import tune_for_a_long_run
    from ..runtime.headless import Headless

    tune_for_a_long_run()
    async with opened(args, call) as review:
        runner = Headless(review)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        call.say(
            f"stet: watching {review.ws.roots[0]} (inbox, outside changes, journaled edits); "
            "stop with Ctrl-C or SIGTERM"
        )
        if call.stderr is not None:
            call.stderr.flush()
        if runner.warning:
            call.say(f"stet: {runner.warning}")
        await runner.run(stop)
        call.say(f"stet: stopped ({runner.inbox.ingested} inbox file(s) ingested)")
    return 0
