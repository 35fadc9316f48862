"""The request and notification handlers: parse the params, call the review, present.

Each handler is that and nothing else; errors of the review are mapped to their JSON-RPC
codes by `guarded`, and the server keeps serving.
"""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException

from ..agents import intake
from ..agents.resume import render as render_resume
from ..agents.tasks import Tasks
from ..domain.decided import NotTaken
from ..domain.model import Hunk
from ..domain.status import Decide
from ..errors import StetError, StoreLost, StoreUnavailable, UnknownHunk
from ..operations import DECISIONS, Decision, offered_by
from ..present import decision as decision_json
from ..present import hunk_json, task_json
from ..present import proposal as proposal_json
from ..review import Review
from ..review.where import engine_of
from ..workspace.paths import uri_to_path
from . import present
from .attach import Opening
from .params import (
    ListHunks,
    OnAll,
    OnFile,
    OnHunks,
    OnHunksNoText,
    OnLines,
    ProposalQuery,
    Reapply,
    TaskContextQuery,
    command,
    decision_params,
    request,
)
from .server import StetServer

log = logging.getLogger(__name__)

Handler = Callable[..., Awaitable[Any]]


def guarded(fn: Handler) -> Handler:
    """Map Stet errors to their JSON-RPC codes; the server keeps serving."""

    @functools.wraps(fn)
    async def wrapper(ls: StetServer, *args: Any) -> Any:
        try:
            return await fn(ls, *args)
        except StetError as exc:
            raise JsonRpcException(message=exc.message, code=exc.code, data=exc.data) from None

    return wrapper


async def _ready(ls: StetServer) -> Review:
    review = ls.review
    if review is None or review.recovery_error is not None:
        if ls.opening is None:
            raise StoreUnavailable("the server is not initialized")
        review = await ls.opening.review()  # a store that could not be used: tried again now
    if review.store is None:
        raise StoreUnavailable("the review store is not open")
    await review.store.check()  # a store deleted under a running server answers nothing from memory
    await review.ready.wait()
    if review.recovery_error is not None:
        raise review.recovery_error
    # What other processes committed since live sync last looked: never answered around. A
    # store out of reach for now (PostgreSQL down) leaves what the editor already shows: a
    # read answers from memory, a write is refused by its own transaction.
    try:
        await review.sync()
    except StoreLost:
        raise
    except StoreUnavailable as exc:
        log.warning("cannot follow the store before answering: %s", exc.message)
    return review


def _roots(params: types.InitializeParams) -> list[str]:
    roots = []
    for folder in params.workspace_folders or []:
        try:
            roots.append(uri_to_path(folder.uri))
        except StetError:
            log.warning("ignoring workspace folder %s", folder.uri)
    if not roots and params.root_uri:
        try:
            roots.append(uri_to_path(params.root_uri))
        except StetError:
            pass
    if not roots and params.root_path:
        roots.append(params.root_path)
    return roots or [os.getcwd()]


def _content_changes(params: types.DidChangeTextDocumentParams) -> list[tuple[dict[str, Any] | None, str]]:
    changes: list[tuple[dict[str, Any] | None, str]] = []
    for c in params.content_changes:
        if isinstance(c, types.TextDocumentContentChangePartial):
            r = c.range
            rng = {
                "start": {"line": r.start.line, "character": r.start.character},
                "end": {"line": r.end.line, "character": r.end.character},
            }
            changes.append((rng, c.text))
        else:
            changes.append((None, c.text))
    return changes


def _doc_hunks(ls: StetServer, client_uri: str, every: bool = False) -> tuple[str | None, list[Hunk]]:
    """The document's hunks the developer is shown (`every`: all of them, decided ones too)."""
    review = ls.review
    if review is None:
        return None, []
    try:
        uri = review.uri_of(client_uri)
    except StetError:
        return None, []
    return uri, review.list(uri) if every else review.open_hunks(uri)


async def initialize(ls: StetServer, params: types.InitializeParams) -> None:
    roots = _roots(params)
    options = params.initialization_options if isinstance(params.initialization_options, dict) else {}
    db = options.get("db") if isinstance(options.get("db"), str) else None
    path = db or ls.db_path or os.environ.get("STET_DB") or os.path.join(roots[0], ".stet", "stet.db")
    ls.opening = Opening(ls, roots, engine_of(path).absolute(path))
    await ls.opening.first()


async def initialized(ls: StetServer, params: types.InitializedParams) -> None:
    if ls.opening is not None:
        await ls.opening.started()


async def shutdown(ls: StetServer, params: Any = None) -> None:
    ls.stopping = True
    if ls.opening is not None:
        await ls.opening.stop()
    if ls.live is not None:
        await ls.live.stop()
    if ls.review is not None:
        await ls.review.close()


async def folders_changed(ls: StetServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
    # pygls has already updated its folder list; every folder is a root (the store stays put).
    if ls.review is None:
        return
    roots = []
    for folder in (f.uri for f in ls.workspace.folders.values()):
        try:
            roots.append(uri_to_path(folder))
        except StetError:
            log.warning("ignoring workspace folder %s", folder)
    try:
        await ls.review.set_roots(roots)
    except StetError as exc:  # the store cannot record a new folder now: it is not a root yet
        log.warning("workspace folders not taken: %s", exc.message)


def watched_files_changed(ls: StetServer, params: types.DidChangeWatchedFilesParams) -> None:
    if ls.review is None:
        return
    uris = set()
    for change in params.changes:
        try:
            uris.add(ls.review.uri_of(change.uri))
        except StetError:
            continue
    ls.review.outside_changed(uris)


def did_open(ls: StetServer, params: types.DidOpenTextDocumentParams) -> None:
    td = params.text_document
    if ls.review is not None:
        ls.review.opened(td.uri, td.text, td.version)
    elif ls.opening is not None:  # kept for the review the store may still bring
        ls.opening.opened(td.uri, td.text, td.version)


def did_change(ls: StetServer, params: types.DidChangeTextDocumentParams) -> None:
    td = params.text_document
    if ls.review is not None:
        ls.review.changed(td.uri, td.version, _content_changes(params))
    elif ls.opening is not None:
        ls.opening.changed(td.uri, td.version, _content_changes(params))


async def did_save(ls: StetServer, params: types.DidSaveTextDocumentParams) -> None:
    if ls.review is not None and ls.review.store is not None:
        await ls.review.saved(params.text_document.uri)


def did_close(ls: StetServer, params: types.DidCloseTextDocumentParams) -> None:
    # Not async: taken in the order sent, before a didOpen of the same file right after it.
    if ls.review is not None:
        ls.review.closed(params.text_document.uri)
    elif ls.opening is not None:
        ls.opening.closed(params.text_document.uri)


def code_lens(ls: StetServer, params: types.CodeLensParams) -> list[types.CodeLens]:
    uri, hunks = _doc_hunks(ls, params.text_document.uri)
    if not hunks or uri is None or ls.review is None:
        return []
    # Parts and rests are named when they share a line: their originals say which is which
    # (looked up only then: most files have one hunk a line).
    shared = len({h.line for h in hunks}) < len(hunks)
    roles = present.split_roles(ls.review.list(uri)) if shared else {}
    return present.code_lenses(hunks, params.text_document.uri, roles)


def code_action(ls: StetServer, params: types.CodeActionParams) -> list[Any]:
    uri, hunks = _doc_hunks(ls, params.text_document.uri)
    if not hunks or uri is None or ls.review is None:
        return []
    doc = ls.review.doc(uri)
    end = doc.end() if doc else None
    start, stop = params.range.start, params.range.end
    selected = None
    if (start.line, start.character) != (stop.line, stop.character):  # a selection, not a cursor
        # (a selection of whole lines ends at the start of the line after them)
        selected = (start.line, stop.line - 1 if stop.character == 0 and stop.line > start.line else stop.line)
    actions = present.code_actions(hunks, params.text_document.uri, start.line, stop.line, end, selected)
    td = ls.client_capabilities.text_document
    if not (td and td.code_action and td.code_action.code_action_literal_support):
        return [a.command for a in actions]  # an older client takes bare commands
    return actions


def hover(ls: StetServer, params: types.HoverParams) -> types.Hover | None:
    _, hunks = _doc_hunks(ls, params.text_document.uri, every=True)
    td = ls.client_capabilities.text_document
    formats = td.hover.content_format if td and td.hover else None
    return present.hover_at(hunks, params.position.line, markdown=not formats or types.MarkupKind.Markdown in formats)


# The LSP's own methods: (method, options, handler).
FEATURES: tuple[tuple[str, Any, Handler | Callable[..., Any]], ...] = (
    (types.INITIALIZE, None, initialize),
    (types.INITIALIZED, None, initialized),
    (types.SHUTDOWN, None, shutdown),
    (types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS, None, folders_changed),
    (types.WORKSPACE_DID_CHANGE_WATCHED_FILES, None, watched_files_changed),
    (types.TEXT_DOCUMENT_DID_OPEN, None, did_open),
    (types.TEXT_DOCUMENT_DID_CHANGE, None, did_change),
    (types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False), did_save),
    (types.TEXT_DOCUMENT_DID_CLOSE, None, did_close),
    (types.TEXT_DOCUMENT_CODE_LENS, None, code_lens),
    (
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]),
        code_action,
    ),
    (types.TEXT_DOCUMENT_HOVER, None, hover),
)


# --- Stet's own requests (operations.OPERATIONS, door "lsp") ---


async def propose(ls: StetServer, params: Any) -> dict[str, Any]:
    return proposal_json.proposed(await intake.propose_params(await _ready(ls), params))


async def list_hunks(ls: StetServer, params: Any) -> dict[str, Any]:
    review = await _ready(ls)
    p = request(ListHunks, params if params is not None else {}, "stet/listHunks")
    hunks = review.list(
        uri=review.uri_of(p.uri) if p.uri else None,
        statuses=p.statuses,
        proposal_id=p.proposal_id,
        task_id=p.task_id,
    )
    return {"hunks": hunk_json.states(hunks)}


async def proposal(ls: StetServer, params: Any) -> dict[str, Any]:
    review = await _ready(ls)
    pid = request(ProposalQuery, params, "stet/proposal").proposal_id
    record = await review.proposal_record(pid)
    if record is None:
        raise UnknownHunk(f"unknown proposal {pid}", {"proposalId": pid})
    record["hunkIds"] = [h.id for h in review.list(proposal_id=pid)]
    return record


async def task_context(ls: StetServer, params: Any) -> dict[str, Any]:
    review = await _ready(ls)
    p = request(TaskContextQuery, params, "stet/taskContext")
    context = task_json.context(await Tasks(review).context(p.task_id), review.ws.rel)
    if p.markdown:  # the `stet resume` text too, for clients that show it
        context["markdown"] = render_resume(context)
    return context


REQUESTS: dict[str, Handler] = {
    "propose": propose,
    "list_hunks": list_hunks,
    "proposal": proposal,
    "task_context": task_context,
}


@dataclass(frozen=True)
class DecisionCommand:
    """A decision command (operations.DECISIONS): `stet.<action>[File|All]`."""

    decision: Decision
    scope: str

    async def run(self, ls: StetServer, *args: Any) -> dict[str, Any]:
        return await decide(self.decision, self.scope, ls, args)


async def decide(decision: Decision, scope: str, ls: StetServer, args: tuple[Any, ...]) -> dict[str, Any]:
    review = await _ready(ls)
    p = command(decision_params(decision, scope), args, f"stet.{decision.action}")
    action, rid, feedback = Decide(decision.action), p.request_id, p.feedback
    if isinstance(p, Reapply):  # takes no versions or feedback: it only puts back what was decided
        decided = await review.decide(action, p.hunk_ids, request_id=rid)
    elif isinstance(p, OnHunks | OnHunksNoText):
        decided = await review.decide(
            action, p.hunk_ids, expected=p.expected, text=p.text, request_id=rid, feedback=feedback
        )
    elif isinstance(p, OnLines):
        done = await review.decide_lines(action, p.hunk_id, p.old, p.new, feedback=feedback, request_id=rid)
        answer = decision_json.split(done)
        missed = _told_not_taken(ls, action, done.not_taken())
        return {**answer, "notTaken": missed} if missed else answer
    elif isinstance(p, OnFile):
        decided = await review.decide(action, uri=p.uri, request_id=rid, feedback=feedback)
    else:
        assert isinstance(p, OnAll)
        decided = await review.decide(
            action, proposal_id=p.proposal_id, task_id=p.task_id, request_id=rid, feedback=feedback
        )
    _told_not_taken(ls, action, decided.not_taken())
    return decision_json.answer(decided)


def register(server: StetServer) -> None:
    """Register every LSP feature, and Stet's requests and commands from the operations table."""
    for method, options, handler in FEATURES:
        server.feature(method, options)(handler)
    for op in offered_by("lsp"):
        server.feature(str(op.lsp))(guarded(REQUESTS[op.name]))
    for decision in DECISIONS:
        for scope in decision.scopes:
            server.command(decision.lsp_command(scope))(guarded(DecisionCommand(decision, scope).run))


def _told_not_taken(ls: StetServer, action: str, not_taken: list[NotTaken]) -> list[dict[str, Any]]:
    """The hunks whose decision's effect did not take (docs/protocol.md, `notTaken`), each
    also shown to the developer, since most editors show nothing of a command's result."""
    missed = decision_json.not_taken(not_taken)
    for m in missed:
        text = f"Stet: {action} of {m['hunkId']} did not take effect ({m['status']}): {m['why']}"
        ls.window_show_message(types.ShowMessageParams(types.MessageType.Warning, text))
    return missed
