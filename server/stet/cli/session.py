"""A command's review: the workspace's store opened through the one bootstrap, closed after."""

from __future__ import annotations

import argparse
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from ..review import Review, open_review
from . import hosting
from .locate import locate


@asynccontextmanager
async def opened(
    args: argparse.Namespace, create: bool = False, repair: bool = False, tidy: bool = True
) -> AsyncIterator[Review]:
    """The review of the store `args` name (no editor: files are written by the review).

    A command never makes a store unless `create`, and never moves a damaged one aside
    unless `repair` (`stet doctor --fix`): a path that is not a Stet store is refused (exit 2).
    `tidy`: remove the temp files killed writes left (every command but `stet doctor`, which
    reports them and removes them only with --fix)."""
    db, roots = locate(args, create)
    if hosting.HOST is not None and not repair:
        yield await hosting.HOST(db, roots)  # the resident's: kept open for the next call
        return
    result = await open_review(roots, db, create=create, quarantine=repair, tidy=tidy)
    if result.notice:
        print(f"stet: {result.notice}", file=sys.stderr)
    try:
        yield result.review
    finally:
        await result.review.close()
