"""A glance at the review without opening it: the hunks as the store has them, when nothing is
left to bring up to date.

Every process that opens the store first finishes the journaled edits it may finish and
re-judges the hunks of files changed since Stet last looked (session.open_review). When there
is no such edit and every file with judged hunks still has the size and mtime Stet stamped,
that work changes nothing, and what the full open would show is the store as it is: a
read-only command (`stet status`) can print it without an event loop, aiosqlite's thread or
the rest of the review: the same hunks (domain.model.Hunk), read from the same rows. Otherwise
`glance` answers None and the caller opens the review.
"""

from __future__ import annotations

import os

from ..domain.effect_state import State
from ..domain.status import OPEN, Status
from ..errors import StetError
from ..store.glance import Look, look
from ..workspace.paths import Workspace, path_to_uri
from ..workspace.tempnames import TEMP_MARK
from .stamps import stat_of

TYPE_CHECKING = False  # types for mypy only
if TYPE_CHECKING:
    from ..domain.model import Hunk

# The hunks whose standing depends on their file's content (as recheck.JUDGED).
JUDGED = OPEN | {Status.APPLIED}


def glance(db_path: str, roots: list[str]) -> list[Hunk] | None:
    """Every hunk of the store as the full open loads it (the domain's Hunk, each with its
    proposal's message and turn, where the document shows it as memory.Memory._merge says),
    sorted as Review.list sorts them; None when opening the review would change something first
    (or the store cannot be read this way)."""
    seen = look(db_path, _uris(roots))
    if seen is None:
        return None
    for h in seen.hunks:
        h.stored_line = h.line
        h.shows_new = h.shown_when_loaded()
    return _current(seen, roots)


# What `stet status --json` read when the table read lighter rows: the same hunks now.
glance_whole = glance


def _uris(roots: list[str]) -> list[str]:
    """The roots' uris as the review writes them (Workspace: real paths)."""
    return [path_to_uri(r) for r in Workspace(roots).roots]


def _current(seen: Look, roots: list[str]) -> list[Hunk] | None:
    """The hunks, sorted, if the store is current for them: else None (see the module)."""
    hunks = seen.hunks
    held: set[str] = set()
    for _id, uri, state, target, owner in seen.effects:
        live = bool(owner) and _alive_elsewhere(owner)
        if state == State.PENDING and not (target == "buffer" and live):
            return None  # an edit this process would carry out (Effects.run_pending)
        if live:
            held.add(uri)  # a live editor's buffer is that file's document: recheck leaves it
    if any(h.kept and h.status == Status.PENDING for h in hunks):
        from . import heads_seen  # (git's and the safe writer's modules: loaded only for a kept hunk)

        if heads_seen.moved(roots, os.environ):
            return None  # a commit since may keep them: the full open looks (review/commit_keeps.py)
    ws = Workspace(roots)
    if _temp_files_left(ws, {h.uri for h in hunks}):
        return None  # a write a kill interrupted: the full open removes what it left
    judged = {h.uri for h in hunks if h.status in JUDGED} - held
    for uri in (u for u in judged if ws.holds(u)):  # once per file
        stamp = seen.stamps.get(uri)
        if stamp is None:
            return None  # never judged as it is: recheck would read it
        try:
            now = stat_of(ws.path_of(uri))
        except (StetError, OSError, ValueError):  # outside the workspace now, unreadable: recheck decides
            return None
        if now[:2] != stamp:
            return None  # changed since Stet last looked: recheck would judge its hunks again
    hunks.sort(key=lambda h: (h.uri, h.line, h.proposal_id, h.seq))
    return hunks


def _temp_files_left(ws: Workspace, uris: set[str]) -> bool:
    """Is a name with Stet's temp mark in a folder of these files? (Look-alikes too: the full open,
    which tells them apart, then runs; that is only slower.)"""
    folders = set()
    for uri in uris:
        try:
            folders.add(os.path.dirname(ws.path_of(uri)))
        except (StetError, ValueError):
            continue
    for folder in folders:
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        if any(TEMP_MARK in name for name in names):
            return True
    return False


def _alive_elsewhere(owner: str) -> bool:
    from ..workspace import owners  # what it imports is needed only here

    return owner != owners.token() and owners.alive(owner)
