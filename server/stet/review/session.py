"""Opening a review: the one bootstrap used by the language server, the CLI, MCP and tests."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..store import engine_of, open_store
from ..workspace import git
from ..workspace.paths import Workspace, path_to_uri
from .config import Editor, Limits, NoEditor
from .service import Review


@dataclass
class Opened:
    review: Review
    notice: str | None  # what the user must be told (a damaged database moved aside)


async def open_review(
    roots: list[str],
    db_path: str,
    editor: Editor | None = None,
    on_change: Callable[[set[str]], None] | None = None,
    *,
    limits: Limits | None = None,
    recover_later: bool = False,
    create: bool = True,
    quarantine: bool = True,
    tidy: bool = True,
) -> Opened:
    """Open the store at `db_path` for the workspace `roots` and load the review.

    Without an editor, the review writes files itself. With `recover_later` (the language
    server) the caller runs `review.recover()` when its editor is ready; otherwise (the CLI,
    MCP) the review is loaded from the store, the journaled edits of closed files are
    finished and the hunks of files changed since Stet last looked are judged again, so
    what this process reports is true without a server running. `create` and `quarantine`
    are Store.open's: a command passes `create` only when it may make a store, `quarantine`
    only when it may move a damaged one aside; `tidy` (all but `stet doctor`, which reports
    them) removes the temp files killed writes left. Raises StoreUnavailable."""
    review = Review(Workspace(roots), editor or NoEditor(), on_change or _nobody, limits)
    home = os.path.join(roots[0], ".stet")
    engine = engine_of(db_path)
    shared: dict[str, Any] = {}
    if engine.shared:  # a review shared by checkouts: which checkout, of which repository
        shared = {"repository": await _repository(review.ws.roots[0])}
    # Paths are stored relative to the roots the workspace writes uris at (store/roots.py).
    root_uris = [path_to_uri(r) for r in review.ws.roots]
    opened = await open_store(db_path, home=home, root_uris=root_uris, create=create, quarantine=quarantine, **shared)
    review.state.store = opened.store
    opened.store.known = review.state.hunks  # rows read again share what memory holds
    review.ws.keep_out_store(engine.local_file(opened.store.path, home))
    notice = opened.notice
    if not recover_later:
        try:
            lag = (await review.up_to_date(tidy=tidy)).lag
        except BaseException:
            await review.close()
            raise
        if lag:
            notice = f"{notice + ' ' if notice else ''}{lag}"
        review.state.ready.set()
    return Opened(review, notice)


async def _repository(root: str) -> str | None:
    """The repository's id: STET_REPOSITORY when set, else its git history's first commit
    (every clone has it, wherever it lives), else None (this checkout alone)."""
    configured = os.environ.get("STET_REPOSITORY")
    if configured:
        return configured
    first = await asyncio.to_thread(git.root_commits, root)
    return f"git:{first[0]}" if first else None


def _nobody(uris: set[str]) -> None:
    """No editor to tell about changes."""
