"""Why a resident does not run a call it was handed (stet/resident/): a call it runs carries
the review the resident holds open (cli/call.py `Call.host`), brought up to date for the call,
instead of one opened and closed.

Kept apart from session.py so that `stet status` can ask without importing the review."""

from __future__ import annotations


class NotHere(Exception):
    """The command names another store (or workspace) than the resident's: it runs elsewhere."""

    why = "another store"


class InputElsewhere(NotHere):
    """The command reads a file its caller did not read for it: it runs in the caller's process."""

    why = "an input file the caller did not read"
