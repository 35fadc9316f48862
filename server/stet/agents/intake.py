"""What an agent hands in, turned into a review proposal: a unified diff, a WorkspaceEdit,
or a `stet/propose` params object. Shared by the CLI and the inbox, so both take exactly
the same path into `Review.propose` as the editor's `stet/propose` request.

A diff is checked against the files before anything is stored: every context and removed
line must be where the patch says, every path inside the workspace. A diff is turned into
a WorkspaceEdit (text edits from its hunk headers, CreateFile / RenameFile / DeleteFile for
file operations), then read by the same parser as the LSP request.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
from pathlib import Path

from ..domain import patches
from ..domain.proposal import Change, FileOp, TextChange
from ..domain.proposed import Proposed
from ..domain.rebase import ChangeDoesNotFit
from ..domain.shapes import JSON, TextEdit
from ..domain.text import lone_surrogate
from ..errors import InvalidParams
from ..fields import obj, opt_str, req_str
from ..review import Review
from ..workspace import safe
from ..workspace.files import read_text
from .derived import input_key, propose_patch_onto


def default_id(kind: str, content: str) -> str:
    """A proposal id derived from the content: handing in the same thing twice adds nothing."""
    return "p-" + hashlib.sha256(f"{kind}\0{content}".encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _uri(root: str, rel: str | None) -> str:
    if rel is None:  # the parser gives every kind of file change the names it needs
        raise patches.PatchError("a file change without the file name it needs")
    return Path(os.path.join(root, rel)).as_uri()


def patch_changes(files: list[patches.FilePatch], root: str) -> tuple[list[Change], list[str]]:
    """The changes a parsed patch stands for (from its headers alone), and notes for the user:
    what `patch_to_edit` gives read back by the WorkspaceEdit parser (agents/params), made
    directly. (Going through that parser imports lsprotocol and cattrs and converts every edit
    twice: most of a `stet propose --patch`'s time.)"""
    changes: list[Change] = []
    notes: list[str] = []
    seen: dict[str, int] = {}

    def text(uri: str, edits: list[TextEdit]) -> TextChange:
        for rng, _ in edits:
            for pos in (rng["start"], rng["end"]):
                if not (0 <= pos["line"] < 2**31):  # as the WorkspaceEdit parser checks
                    raise InvalidParams(f"{uri}: position out of range: {pos}")
        return TextChange(uri, None, edits)

    for f in files:
        for path in {p for p in (f.old_path, f.new_path) if p is not None}:
            patches.check_path(path, f.patch_line)
            if path in seen:
                raise patches.PatchError(
                    f"the file appears twice in the patch (first at patch line {seen[path]})", f.patch_line, path
                )
            seen[path] = f.patch_line
        if f.binary:
            raise patches.PatchError("binary patches are not supported: Stet reviews text", f.patch_line, f.path)
        if f.mode_change:
            notes.append(f"{f.path}: mode change {f.mode_change[0]} -> {f.mode_change[1]} ignored (Stet reviews text)")
        edits = patches.hunk_edits(f)
        if f.op == "create":
            changes.append(FileOp("create", _uri(root, f.new_path)))
            if edits:
                changes.append(text(_uri(root, f.new_path), edits))
        elif f.op == "delete":
            changes.append(FileOp("delete", _uri(root, f.old_path)))
        elif f.op == "rename":
            changes.append(FileOp("rename", _uri(root, f.old_path), _uri(root, f.new_path)))
            if edits:
                changes.append(text(_uri(root, f.new_path), edits))
        elif f.op == "copy":
            raise patches.PatchError(
                "copied files are not supported: send the copy as a new file", f.patch_line, f.path
            )
        elif edits:
            changes.append(text(_uri(root, f.new_path), edits))
        elif not f.mode_change:
            notes.append(f"{f.path}: no change")
    if not changes:
        raise patches.PatchError("the patch changes no text")
    return changes, notes


def patch_to_edit(files: list[patches.FilePatch], root: str) -> tuple[JSON, list[str]]:
    """The WorkspaceEdit a parsed patch stands for, and notes for the user: what an agent
    would send to `stet/propose` for the same change (tests hold `patch_changes` to it)."""
    changes, notes = patch_changes(files, root)
    out: list[JSON] = []
    for c in changes:
        if isinstance(c, TextChange):
            edits = [{"range": r, "newText": t} for r, t in c.edits]
            out.append({"textDocument": {"uri": c.uri, "version": None}, "edits": edits})
        elif c.kind == "rename":
            out.append({"kind": "rename", "oldUri": c.uri, "newUri": c.new_uri, "options": {"overwrite": False}})
        elif c.kind == "create":
            out.append({"kind": "create", "uri": c.uri, "options": {"overwrite": False}})
        else:
            out.append({"kind": "delete", "uri": c.uri})
    return {"documentChanges": out}, notes


def check_patch_text(text: str, strip: int = 1) -> list[patches.FilePatch]:
    """Parse a diff and check its paths without touching anything; returns the parsed files
    (for `propose_patch`, which then need not parse them again). Raises InvalidParams."""
    try:
        files = patches.parse(text, strip)
        patch_changes(files, "/")
    except (patches.PatchError, patches.PatchMismatch) as exc:
        raise InvalidParams(str(exc)) from None
    return files


def check_patch(review: Review, files: list[patches.FilePatch]) -> None:
    """Every file of the patch must be inside the workspace and match it exactly; raises otherwise."""
    for f in files:
        base = None
        if f.old_path is not None:
            base = read_text(review.ws.resolve(_uri(review.ws.roots[0], f.old_path)))
        if f.op in ("create", "rename"):
            target = review.ws.resolve(_uri(review.ws.roots[0], f.new_path))
            if safe.exists(target):
                raise patches.PatchError("the patch creates this file, but it already exists", f.patch_line, f.new_path)
        if f.op == "create":
            base = None
        patches.apply_file(f, base)


async def propose_patch(
    review: Review,
    text: str,
    proposal_id: str | None = None,
    *,
    task_id: str | None = None,
    agent: str | None = None,
    message: str | None = None,
    strip: int = 1,
    parsed: list[patches.FilePatch] | None = None,
) -> tuple[Proposed, list[str]]:
    """Propose a unified diff (`parsed`: what check_patch_text gave for this text and strip);
    returns the review's answer and notes. Raises StetError."""
    try:
        files = parsed if parsed is not None else patches.parse(text, strip)
        changes, notes = patch_changes(files, review.ws.roots[0])
        proposal_id = proposal_id or default_id("patch", text)
        # A proposal already stored is answered by the review (its replay, or Conflict when the
        # id was used for another edit); only a new one is checked against the files.
        if await review.require_store().proposal(proposal_id) is None:
            try:
                await asyncio.to_thread(check_patch, review, files)
            except patches.PatchMismatch as mismatch:
                if task_id is None:
                    raise
                # A task re-sending a diff made before some of its hunks were applied.
                try:
                    answer = await propose_patch_onto(review, task_id, text, files, proposal_id, agent, message)
                except ChangeDoesNotFit:
                    raise mismatch from None  # it names the file that does not fit, not another one
                return answer, notes
        else:
            await review.sync()
            replayed = await review.replay(proposal_id, input_key("patch", text))
            if replayed is not None:
                return replayed, notes
    except (patches.PatchError, patches.PatchMismatch, ChangeDoesNotFit) as exc:
        raise InvalidParams(str(exc)) from None
    answer = await review.propose(proposal_id, changes, task_id=task_id, agent=agent, message=message)
    return answer, notes


async def propose_params(review: Review, params: object, proposal_id: str | None = None) -> Proposed:
    """Propose a `stet/propose` params object (as the LSP request does)."""
    from . import params as P  # the WorkspaceEdit parser: lsprotocol, loaded only for one

    p = obj(params, "stet/propose")
    where = lone_surrogate(p, "the proposal")  # JSON lets `\ud800` through; it is not text
    if where is not None:
        raise InvalidParams(f"{where} holds a lone UTF-16 surrogate, not text")
    given = opt_str(p, "proposalId")
    if proposal_id is not None and given is not None and given != proposal_id:
        raise InvalidParams(f"proposalId {given!r} differs from the file's name {proposal_id!r}")
    pid = proposal_id or req_str(p, "proposalId")
    return await review.propose(
        pid,
        P.workspace_edit(p.get("edit")),
        task_id=opt_str(p, "taskId"),
        agent=opt_str(p, "agent"),
        message=opt_str(p, "message"),
    )
