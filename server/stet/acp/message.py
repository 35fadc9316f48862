"""One ACP message as the relay read it, and what Stet's part says to do with it.

ACP is JSON-RPC 2.0, one message per line. A message is kept as the bytes read (passed on
untouched unless Stet's part rewrites it) with its body parsed once: None when the line is
not a JSON object (it still passes through, untouched).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

JSON = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Message:
    raw: bytes  # the line as read, without its line end
    body: JSON | None  # the parsed object; None when the line is not one

    @property
    def method(self) -> str | None:
        m = self.body.get("method") if self.body is not None else None
        return m if isinstance(m, str) else None

    @property
    def is_request(self) -> bool:
        return self.method is not None and self.body is not None and "id" in self.body

    @property
    def is_notification(self) -> bool:
        return self.method is not None and self.body is not None and "id" not in self.body

    @property
    def is_response(self) -> bool:
        b = self.body
        return b is not None and "method" not in b and "id" in b and ("result" in b or "error" in b)

    @property
    def params(self) -> JSON:
        p = self.body.get("params") if self.body is not None else None
        return p if isinstance(p, dict) else {}


@dataclass(frozen=True, slots=True)
class Forward:
    """Pass the message on as it was read."""


FORWARD = Forward()


@dataclass(frozen=True, slots=True)
class Rewrite:
    """Pass this body on instead (the same id and method: Stet only adds to it)."""

    body: JSON


@dataclass(frozen=True, slots=True)
class Reply:
    """Do not pass the request on: answer its sender with this body (Stet answers for the
    other side, e.g. a permission the developer already refused)."""

    body: JSON


Verdict = Forward | Rewrite | Reply
