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
from ..domain.rebase import ChangeDoesNotFit
from ..domain.shapes import JSON
from ..domain.text import lone_surrogate
from ..errors import InvalidParams
from ..review import Review
from ..workspace import safe
from ..workspace.files import read_text
from . import params as P
from .derived import input_key, propose_patch_onto


def default_id(kind: str, content: str) -> str:
    """A proposal id derived from the content: handing in the same thing twice adds nothing."""
    return "p-" + hashlib.sha256(f"{kind}\0{content}".encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _uri(root: str, rel: str | None) -> str:
    if rel is None:  # the parser gives every kind of file change the names it needs
        raise patches.PatchError("a file change without the file name it needs")
    return Path(os.path.join(root, rel)).as_uri()


def patch_to_edit(files: list[patches.FilePatch], root: str) -> tuple[JSON, list[str]]:
    """The WorkspaceEdit of a parsed patch (from its headers alone), and notes for the user."""
    changes: list[JSON] = []
    notes: list[str] = []
    seen: dict[str, int] = {}
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
        edits = [{"range": r, "newText": t} for r, t in patches.hunk_edits(f)]
        if f.op == "create":
            changes.append({"kind": "create", "uri": _uri(root, f.new_path), "options": {"overwrite": False}})
            if edits:
                changes.append({"textDocument": {"uri": _uri(root, f.new_path), "version": None}, "edits": edits})
        elif f.op == "delete":
            changes.append({"kind": "delete", "uri": _uri(root, f.old_path)})
        elif f.op == "rename":
            changes.append(
                {
                    "kind": "rename",
                    "oldUri": _uri(root, f.old_path),
                    "newUri": _uri(root, f.new_path),
                    "options": {"overwrite": False},
                }
            )
            if edits:
                changes.append({"textDocument": {"uri": _uri(root, f.new_path), "version": None}, "edits": edits})
        elif f.op == "copy":
            raise patches.PatchError(
                "copied files are not supported: send the copy as a new file", f.patch_line, f.path
            )
        elif edits:
            changes.append({"textDocument": {"uri": _uri(root, f.new_path), "version": None}, "edits": edits})
        elif not f.mode_change:
            notes.append(f"{f.path}: no change")
    if not changes:
        raise patches.PatchError("the patch changes no text")
    return {"documentChanges": changes}, notes


def check_patch_text(text: str, strip: int = 1) -> None:
    """Parse a diff and check its paths without touching anything; raises InvalidParams."""
    try:
        patch_to_edit(patches.parse(text, strip), "/")
    except (patches.PatchError, patches.PatchMismatch) as exc:
        raise InvalidParams(str(exc)) from None


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
) -> tuple[dict, list[str]]:
    """Propose a unified diff; returns the review's answer and notes. Raises StetError."""
    try:
        files = patches.parse(text, strip)
        edit, notes = patch_to_edit(files, review.ws.roots[0])
        proposal_id = proposal_id or default_id("patch", text)
        # A proposal already stored is answered by the review (its replay, or Conflict when the
        # id was used for another edit); only a new one is checked against the files.
        if await review.require_store().proposal(proposal_id) is None:
            try:
                await asyncio.to_thread(check_patch, review, files)
            except patches.PatchMismatch:
                if task_id is None:
                    raise
                # A task re-sending a diff made before some of its hunks were applied.
                answer = await propose_patch_onto(review, task_id, text, files, proposal_id, agent, message)
                return answer, notes
        else:
            await review.sync()
            replayed = await review.replay(proposal_id, input_key("patch", text))
            if replayed is not None:
                return replayed, notes
    except (patches.PatchError, patches.PatchMismatch, ChangeDoesNotFit) as exc:
        raise InvalidParams(str(exc)) from None
    answer = await review.propose(proposal_id, P.workspace_edit(edit), task_id=task_id, agent=agent, message=message)
    return answer, notes


async def propose_params(review: Review, params: object, proposal_id: str | None = None) -> dict:
    """Propose a `stet/propose` params object (as the LSP request does)."""
    p = P.obj(params, "stet/propose")
    where = lone_surrogate(p, "the proposal")  # JSON lets `\ud800` through; it is not text
    if where is not None:
        raise InvalidParams(f"{where} holds a lone UTF-16 surrogate, not text")
    given = P.opt_str(p, "proposalId")
    if proposal_id is not None and given is not None and given != proposal_id:
        raise InvalidParams(f"proposalId {given!r} differs from the file's name {proposal_id!r}")
    pid = proposal_id or P.req_str(p, "proposalId")
    return await review.propose(
        pid,
        P.workspace_edit(p.get("edit")),
        task_id=P.opt_str(p, "taskId"),
        agent=P.opt_str(p, "agent"),
        message=P.opt_str(p, "message"),
    )
