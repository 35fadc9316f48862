"""Whether this process is a resident one (stet/resident/): then a command's review is the one
the resident holds open, brought up to date for the call, instead of one opened and closed.

Kept apart from session.py so that `stet status` can ask without importing the review."""

from __future__ import annotations

TYPE_CHECKING = False  # no `typing` at the CLI's start
if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from ..review import Review

    # (database, roots) of a command -> the resident's review, up to date; raises NotHere
    # when the command's store is not the resident's.
    Host = Callable[[str, list[str]], Awaitable[Review]]

HOST: Host | None = None


class NotHere(Exception):
    """The command names another store (or workspace) than the resident's: it runs elsewhere."""

    why = "another store"


class InputElsewhere(NotHere):
    """The command reads a file its caller did not read for it: it runs in the caller's process."""

    why = "an input file the caller did not read"
