"""A diff proposed through the CLI or the inbox becomes the review's changes directly
(intake.patch_changes), no longer through a WorkspaceEdit read back by the lsprotocol-based
parser. The changes must be exactly those of the path it replaces: the WorkspaceEdit built
from the patch's headers (the builder as it was, kept here as the reference), then parsed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stet.agents import params as P
from stet.agents.intake import patch_changes, patch_to_edit
from stet.domain import patches
from stet.errors import InvalidParams

ROOT = "/work/ws"


def _uri(rel: str | None) -> str:
    assert rel is not None
    return Path(os.path.join(ROOT, rel)).as_uri()


def reference_edit(files: list[patches.FilePatch]) -> dict:
    """The WorkspaceEdit intake.patch_to_edit built before (notes and checks left out)."""
    changes: list[dict] = []
    for f in files:
        edits = [{"range": r, "newText": t} for r, t in patches.hunk_edits(f)]
        if f.op == "create":
            changes.append({"kind": "create", "uri": _uri(f.new_path), "options": {"overwrite": False}})
            if edits:
                changes.append({"textDocument": {"uri": _uri(f.new_path), "version": None}, "edits": edits})
        elif f.op == "delete":
            changes.append({"kind": "delete", "uri": _uri(f.old_path)})
        elif f.op == "rename":
            changes.append(
                {
                    "kind": "rename",
                    "oldUri": _uri(f.old_path),
                    "newUri": _uri(f.new_path),
                    "options": {"overwrite": False},
                }
            )
            if edits:
                changes.append({"textDocument": {"uri": _uri(f.new_path), "version": None}, "edits": edits})
        elif edits:
            changes.append({"textDocument": {"uri": _uri(f.new_path), "version": None}, "edits": edits})
    return {"documentChanges": changes}


LINES = st.lists(st.sampled_from(["a\n", "b\n", "c\n", "a\r\n", "\n", "é\n", "  x = 1\n"]), max_size=12)
TEXTS = LINES.map("".join)


@st.composite
def diffs(draw) -> str:
    out = []
    for k in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["edit", "edit", "create", "delete", "rename"]))
        old, new = draw(TEXTS), draw(TEXTS)
        name, other = f"d/f{k}.txt", f"d/moved{k}.txt"
        if kind == "edit":
            out.append(patches.format_file(name, name, old, new))
        elif kind == "create":
            out.append(patches.format_file(None, name, None, new))
        elif kind == "delete":
            out.append(patches.format_file(name, None, old, None))
        else:
            out.append(patches.format_file(name, other, old, new))
    return "".join(out)


@settings(max_examples=400, deadline=None)
@given(diffs())
def test_the_changes_of_a_patch_are_those_of_its_workspace_edit(diff):
    try:
        files = patches.parse(diff)
    except patches.PatchError:
        return
    try:
        changes, _ = patch_changes(files, ROOT)
    except patches.PatchError:
        return  # a patch that changes nothing: refused by both
    assert changes == P.workspace_edit(reference_edit(files))
    edit, _ = patch_to_edit(files, ROOT)
    assert edit == reference_edit(files)


def test_positions_past_the_parser_limit_are_refused_as_the_parser_refuses_them():
    diff = f"--- a/f.txt\n+++ b/f.txt\n@@ -{2**31 + 1} +{2**31 + 1} @@\n-x\n+y\n"
    files = patches.parse(diff)
    with pytest.raises(InvalidParams, match="position out of range"):
        patch_changes(files, ROOT)
    with pytest.raises(InvalidParams):  # lsprotocol's own check, in its words
        P.workspace_edit(reference_edit(files))
