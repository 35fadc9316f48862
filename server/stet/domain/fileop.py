"""Whether a file operation (create, delete, rename) can be carried out or taken back,
judged from the file's text now. Pure: the caller reads the files."""

from __future__ import annotations


def applicable(kind: str, text: str | None, before: str, after: str, target_exists: bool) -> bool:
    """Can a pending operation still be carried out, given the file's current text?"""
    if kind == "create":
        return text is None or text == after
    if kind == "delete":
        return text == before
    if kind == "rename":
        return text is not None and not target_exists
    return False


def undoable(kind: str, text: str | None, after: str, source_exists: bool, target_exists: bool) -> bool:
    """Can an applied operation be taken back without losing anything?"""
    if kind == "create":
        return text == after
    if kind == "delete":
        return text is None
    if kind == "rename":
        return target_exists and not source_exists
    return False
