"""Errors of the public contract, with their JSON-RPC codes (docs/protocol.md)."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # (typing itself is not imported at run time: `stet status` starts faster)
    from typing import Any


class StetError(Exception):
    code = -32603
    name = "InternalError"

    def __init__(self, message: str, data: Any = None):
        super().__init__(message)
        self.message = message
        self.data = data


class InvalidParams(StetError):
    code, name = -32602, "InvalidParams"


class UnknownHunk(StetError):
    code, name = -32001, "UnknownHunk"


class Conflict(StetError):
    code, name = -32002, "Conflict"


class OutsideWorkspace(StetError):
    code, name = -32003, "OutsideWorkspace"


class TooLarge(StetError):
    code, name = -32004, "TooLarge"


class StoreUnavailable(StetError):
    code, name = -32005, "StoreUnavailable"


class StoreLost(StoreUnavailable):
    """The database (or its write-ahead log) was deleted, replaced or moved while this process
    ran: it acknowledges nothing more (a commit now would be lost with the process)."""


class UnknownTask(UnknownHunk):
    """A task id that was never started and has no hunks: the same code as UnknownHunk
    ("an id that does not exist"), so clients and exit codes treat both alike."""

    name = "UnknownTask"
