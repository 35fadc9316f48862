"""Opening a review: the one bootstrap used by the language server, the CLI, MCP and tests."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..store import Store
from ..workspace.paths import Workspace
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
) -> Opened:
    """Open the store at `db_path` for the workspace `roots` and load the review.

    Without an editor, the review writes files itself. With `recover_later` (the language
    server) the caller runs `review.recover()` when its editor is ready; otherwise the
    review is loaded from the store and ready at once. Raises StoreUnavailable."""
    review = Review(Workspace(roots), editor or NoEditor(), on_change or _nobody, limits)
    opened = await Store.open(db_path)
    review.state.store = opened.store
    if not recover_later:
        try:
            await review.sync()
            await review.finish_captures()  # a capture killed before its files were restored
        except BaseException:
            await review.close()
            raise
        review.state.ready.set()
    return Opened(review, opened.notice)


def _nobody(uris: set[str]) -> None:
    """No editor to tell about changes."""
