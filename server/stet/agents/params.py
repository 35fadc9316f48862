"""Checking the raw JSON an agent hands in: a `stet/propose` params object, a WorkspaceEdit.

Anything malformed becomes InvalidParams with a message naming the field: an agent gets an
answer it can act on, never silence and never a crash. Used by every door a proposal comes
through (the LSP request, the CLI's --edit, the inbox, MCP).
"""

from __future__ import annotations

import collections.abc
import typing
from collections.abc import Callable
from typing import Any

import cattrs
from lsprotocol import converters, types

from ..domain.proposal import Change, FileOp, TextChange
from ..domain.shapes import Range
from ..errors import InvalidParams

_converter = converters.get_converter()
_Hook = Callable[[object, object], object]  # a cattrs structure hook: (raw value, wanted type)


# lsprotocol's converter coerces: "1", 1.5 and true become the line 1, 5 becomes the text "5",
# {} becomes an empty list of edits. The contract says wrong types are InvalidParams: be strict.
def _exactly(kind: type, what: str) -> _Hook:
    def hook(value: object, _type: object) -> object:
        if type(value) is not kind:
            raise TypeError(f"expected {what}, got {type(value).__name__} {value!r:.40}")
        return value

    return hook


_converter.register_structure_hook(int, _exactly(int, "an integer"))
_converter.register_structure_hook(str, _exactly(str, "a string"))
_converter.register_structure_hook(bool, _exactly(bool, "true or false"))


def _is_sequence(t: object) -> bool:
    return typing.get_origin(t) in (list, collections.abc.Sequence, collections.abc.MutableSequence)


def _strict_sequence(t: object) -> _Hook:
    (item,) = typing.get_args(t) or (typing.Any,)

    def hook(value: object, _type: object) -> list[object]:
        if not isinstance(value, list):
            raise TypeError(f"expected a list, got {type(value).__name__}")
        return [_converter.structure(v, item) for v in value]

    return hook


_converter.register_structure_hook_factory(_is_sequence, _strict_sequence)


def workspace_edit(raw: Any) -> list[Change]:
    """The changes of a WorkspaceEdit in order: text edits per file and file operations."""
    if not isinstance(raw, dict):
        raise InvalidParams("`edit` must be a WorkspaceEdit object")
    try:
        edit = _converter.structure(raw, types.WorkspaceEdit)
    except (cattrs.BaseValidationError, TypeError, ValueError, KeyError, AttributeError) as exc:
        detail = "; ".join(cattrs.transform_error(exc)) if isinstance(exc, cattrs.BaseValidationError) else str(exc)
        raise InvalidParams(f"`edit` is not a valid WorkspaceEdit: {detail}") from None
    files: list[Change] = []
    if edit.document_changes is not None:
        for change in edit.document_changes:
            if not isinstance(change, types.TextDocumentEdit):
                files.append(_file_op(change))
                continue
            items = []
            for e in change.edits:
                if not isinstance(e, types.TextEdit):
                    raise InvalidParams("annotated and snippet text edits are not supported; send plain TextEdits")
                items.append((_range(e.range), e.new_text))
            files.append(TextChange(change.text_document.uri, change.text_document.version, items))
    elif edit.changes is not None:
        for uri, edits in edit.changes.items():
            files.append(TextChange(uri, None, [(_range(e.range), e.new_text) for e in edits]))
    for f in files:
        for rng, text in getattr(f, "edits", ()):
            for pos in (rng["start"], rng["end"]):
                if not (0 <= pos["line"] < 2**31 and 0 <= pos["character"] < 2**31):
                    raise InvalidParams(f"{f.uri}: position out of range: {pos}")
            if "\x00" in text:  # the file would turn binary: Stet reviews text
                raise InvalidParams(f"{f.uri}: a newText holds a NUL byte; binary content is not reviewed")
    return files


def _file_op(change: Any) -> FileOp:
    o = change.options
    if isinstance(change, types.CreateFile):
        return FileOp("create", change.uri, None, bool(o and o.overwrite), bool(o and o.ignore_if_exists))
    if isinstance(change, types.RenameFile):
        return FileOp("rename", change.old_uri, change.new_uri, bool(o and o.overwrite), bool(o and o.ignore_if_exists))
    if isinstance(change, types.DeleteFile):
        if o and o.recursive:
            raise InvalidParams(f"deleting folders ({change.uri}, recursive) is not supported; delete files")
        return FileOp("delete", change.uri, ignore_if_not_exists=bool(o and o.ignore_if_not_exists))
    raise InvalidParams(f"unsupported document change {type(change).__name__}")


def _range(r: types.Range) -> Range:
    return {
        "start": {"line": r.start.line, "character": r.start.character},
        "end": {"line": r.end.line, "character": r.end.character},
    }
