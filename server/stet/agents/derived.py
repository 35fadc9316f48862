"""Proposals derived from the files as they are: an agent's exact-text edits, or a diff made
before some of its task's hunks were applied, carried onto the files now (see
`domain.rebase`). Identified by the agent's own input, so re-sending it replays the first
answer even after the developer decided some of it."""

from __future__ import annotations

import hashlib
from collections.abc import Callable

from ..domain import patches
from ..domain.model import Hunk
from ..domain.proposal import Change, FileOp, TextChange
from ..domain.proposed import Proposed
from ..domain.rebase import ChangeDoesNotFit, line_edits, rebase
from ..domain.status import Status
from ..errors import InvalidParams
from ..review import Review
from ..workspace.files import decode_text
from .checks import text as check_text

# uri -> (its text now, None when it does not exist) -> the new text
Makers = dict[str, Callable[[str | None], str]]


async def propose_patch_onto(
    review: Review,
    task_id: str,
    text: str,
    files: list[patches.FilePatch],
    proposal_id: str,
    agent: str | None,
    message: str | None,
) -> Proposed:
    """A parsed diff that does not fit the files as they are, made against them with this
    task's applied hunks taken out (see `domain.rebase`). Only plain file modifications."""
    makers: Makers = {}
    for f in files:
        if f.op != "modify":
            raise ChangeDoesNotFit(f"{f.path}: a {f.op} that does not fit the files as they are")

        def make(text_now: str | None, f: patches.FilePatch = f) -> str:
            try:
                new = patches.apply_file(f, text_now)
            except (patches.PatchError, patches.PatchMismatch) as exc:
                raise ChangeDoesNotFit(str(exc)) from None
            if new is None:  # a modification never deletes; this is the parser's promise
                raise ChangeDoesNotFit(f"{f.path}: the patch deletes the file")
            return new

        makers[review.ws.uri_for(f.path)] = make
    return await propose_derived(review, task_id, input_key("patch", text), proposal_id, makers, agent, message)


async def propose_derived(
    review: Review,
    task_id: str,
    key: str,
    pid: str,
    makers: Makers,
    agent: str | None,
    message: str | None,
) -> Proposed:
    """Propose new file texts made by `makers` (uri -> text now, None for no file -> new text).

    The proposal is identified by the agent's own input (`key`), not by the edits derived
    from the files, so re-sending the same input replays the first answer even after the
    developer has decided some of it."""
    check_text("taskId", task_id, 256)
    await review.sync()  # the answer shows the hunks as they are now, whoever decided them
    answer = await review.replay(pid, key)
    if answer is not None:
        return answer
    changes: list[Change] = []
    already: list[str] = []
    rel = review.ws.rel
    for uri, make in makers.items():
        data = await review.bytes_now(uri)
        try:
            if data is None:
                changes += [FileOp("create", uri), TextChange(uri, None, [(_START, make(None))])]
                continue
            current = decode_text(data, rel(uri))
            mine = review.list(uri=uri, task_id=task_id)
            created = [h for h in mine if h.kind == "create" and h.status == Status.APPLIED]
            if created and _creates_again(make, created[0]):
                already.append(created[0].id)  # the file this task created, sent again
                continue
            applied = [h for h in mine if h.kind == "edit" and h.status == Status.APPLIED]
            new_text, repeated = rebase(current, applied, make)
        except ChangeDoesNotFit as exc:
            raise InvalidParams(str(exc)) from None
        already += [h.id for h in repeated]
        doc = review.doc(uri)
        edits = line_edits(current, new_text)
        if edits:
            changes.append(TextChange(uri, doc.version if doc is not None else None, edits))
    return await review.propose(
        pid, changes, task_id=task_id, agent=agent, message=message, edit_hash=key, already_in=already
    )


def input_key(kind: str, content: str) -> str:
    """What identifies a proposal derived from an agent's input, for replays."""
    return f"input:{kind}:" + hashlib.sha256(content.encode("utf-8", "surrogatepass")).hexdigest()


_START = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}


def _creates_again(make: Callable[[str | None], str], created: Hunk) -> bool:
    """Does this change create the file (with the content) this task's create hunk made?"""
    try:
        return make(None) == created.new_text
    except ChangeDoesNotFit:
        return False
