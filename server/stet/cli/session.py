"""A command's review: the workspace's store opened through the one bootstrap, closed after."""

from __future__ import annotations

import argparse
import logging
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from types import TracebackType

from ..domain.inert import inert
from ..review import Review, open_review
from .call import Call
from .locate import locate


@asynccontextmanager
async def opened(
    args: argparse.Namespace, call: Call, create: bool = False, repair: bool = False, tidy: bool = True
) -> AsyncIterator[Review]:
    """The review of the store `args` name (no editor: files are written by the review).

    A command never makes a store unless `create`, and never moves a damaged one aside
    unless `repair` (`stet doctor --fix`): a path that is not a Stet store is refused (exit 2).
    `tidy`: remove the temp files killed writes left (every command but `stet doctor`, which
    reports them and removes them only with --fix)."""
    db, roots = locate(args, create, call)
    if call.host is not None and not repair:
        yield await call.host(db, roots, call)  # the resident's: kept open for the next call
        return
    with _logged_inert(call):
        result = await open_review(roots, db, create=create, quarantine=repair, tidy=tidy)
        if result.notice:
            call.say(f"stet: {inert(result.notice)}")
        try:
            yield result.review
        finally:
            await result.review.close()


ExcInfo = tuple[type[BaseException], BaseException, TracebackType | None] | tuple[None, None, None]


class _Inert(logging.Formatter):
    """What the review's background work logs may quote what an agent wrote (a path in a patch
    of the inbox, a proposal's error): the message made inert on its line, a traceback line by line."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        return inert(super().formatMessage(record))

    def formatException(self, ei: ExcInfo) -> str:
        return "\n".join(inert(line, keep="\t") for line in super().formatException(ei).split("\n"))


@contextmanager
def _logged_inert(call: Call) -> Iterator[None]:
    """Warnings and errors on stderr, the message alone, as Python says them in a process that
    set no logging up (`stet watch`, `stet doctor --fix`), but made inert. A process that set
    its own up (the resident's log file, a test's capture) keeps it."""
    root = logging.getLogger()
    if root.handlers:
        yield
        return
    handler = logging.StreamHandler(call.stderr)
    handler.setFormatter(_Inert("%(message)s"))
    handler.setLevel(logging.WARNING)
    root.addHandler(handler)
    try:
        yield
    finally:
        root.removeHandler(handler)
