"""The typed params of Stet's own LSP methods and commands, and the one place raw JSON becomes
them (`structure`: a malformed member is InvalidParams naming it). The operations table
(operations.py) says which methods and commands there are; these say what each one takes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..domain.status import Status
from ..errors import InvalidParams
from ..fields import obj, opt_str, req_str

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar

    from ..operations import Decision

    Check = Callable[[dict[str, Any], str], Any]
    Wire = tuple[tuple[str, str, Check], ...]
    Model = TypeVar("Model", bound="Params")


def _hunk_ids(d: dict[str, Any], key: str) -> list[str]:
    ids = d.get(key)
    if not isinstance(ids, list) or not ids or not all(isinstance(i, str) and i for i in ids):
        raise InvalidParams(f"`{key}` must be a non-empty list of hunk id strings")
    return ids


def _versions(d: dict[str, Any], key: str) -> dict[str, int] | None:
    value = d.get(key)
    if value is None:
        return None
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) for k, v in value.items()
    ):
        raise InvalidParams(f"`{key}` must map hunk ids to integer versions")
    return value


def _statuses(d: dict[str, Any], key: str) -> set[Status] | None:
    value = d.get(key)
    if value is None:
        return None
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        raise InvalidParams(f"`{key}` must be a list of statuses")
    try:
        return {Status(v) for v in value}
    except (ValueError, TypeError):
        raise InvalidParams(f"`{key}` values must be among {', '.join(s.value for s in Status)}") from None


def _no_text(d: dict[str, Any], key: str) -> None:
    if opt_str(d, key) is not None:
        raise InvalidParams(f"`{key}` is only for stet.accept")


def _ranges(d: dict[str, Any], key: str) -> list[list[int]]:
    """0-based inclusive [first, last] line ranges; absent: none."""
    value = d.get(key)
    if value is None:
        return []
    if not isinstance(value, list) or not all(
        isinstance(r, list) and len(r) == 2 and all(isinstance(i, int) and not isinstance(i, bool) for i in r)
        for r in value
    ):
        raise InvalidParams(f"`{key}` must be a list of [first, last] line ranges (0-based, inclusive)")
    return value


def _flag(d: dict[str, Any], key: str) -> bool:
    return d.get(key) is True  # anything but true is no


class Params:
    """A params object read from JSON. WIRE: (attribute, JSON member, check) in the order
    they are checked; a check raises InvalidParams naming its member."""

    WIRE: Wire = ()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{a}={getattr(self, a)!r}' for a, _, _ in self.WIRE)})"


class Scoped(Params):
    """What every decision takes."""

    request_id: str | None
    feedback: str | None
    WIRE: Wire = (("request_id", "requestId", opt_str), ("feedback", "feedback", opt_str))


class OnHunks(Scoped):
    text: str | None
    hunk_ids: list[str]
    expected: dict[str, int] | None
    WIRE: Wire = (
        *Scoped.WIRE,
        ("text", "text", opt_str),
        ("hunk_ids", "hunkIds", _hunk_ids),
        ("expected", "expectedVersions", _versions),
    )


class OnHunksNoText(Scoped):
    text: None
    hunk_ids: list[str]
    expected: dict[str, int] | None
    WIRE: Wire = (
        *Scoped.WIRE,
        ("text", "text", _no_text),
        ("hunk_ids", "hunkIds", _hunk_ids),
        ("expected", "expectedVersions", _versions),
    )


class Reapply(Scoped):
    hunk_ids: list[str]
    WIRE: Wire = (*Scoped.WIRE, ("text", "text", _no_text), ("hunk_ids", "hunkIds", _hunk_ids))


class OnLines(Scoped):
    """Some lines of one hunk (docs/protocol.md, "Parts of a hunk")."""

    hunk_id: str
    old: list[list[int]]
    new: list[list[int]]
    WIRE: Wire = (
        *Scoped.WIRE,
        ("hunk_id", "hunkId", req_str),
        ("old", "old", _ranges),
        ("new", "new", _ranges),
    )


class OnFile(Scoped):
    uri: str
    WIRE: Wire = (*Scoped.WIRE, ("uri", "uri", req_str))


class OnAll(Scoped):
    proposal_id: str | None
    task_id: str | None
    WIRE: Wire = (*Scoped.WIRE, ("proposal_id", "proposalId", opt_str), ("task_id", "taskId", opt_str))


class ListHunks(Params):
    uri: str | None
    statuses: set[Status] | None
    proposal_id: str | None
    task_id: str | None
    WIRE: Wire = (
        ("uri", "uri", opt_str),
        ("statuses", "status", _statuses),
        ("proposal_id", "proposalId", opt_str),
        ("task_id", "taskId", opt_str),
    )


class ProposalQuery(Params):
    proposal_id: str
    WIRE: Wire = (("proposal_id", "proposalId", req_str),)


class TaskContextQuery(Params):
    task_id: str
    markdown: bool
    WIRE: Wire = (("task_id", "taskId", req_str), ("markdown", "markdown", _flag))


def request(model: type[Model], params: Any, name: str) -> Model:
    """A request's params as `model` (see `structure`)."""
    return structure(model, obj(params, name))


def command(model: type[Model], args: tuple[Any, ...] | list[Any] | None, name: str) -> Model:
    """A command's arguments, one params object, as `model` (see `structure`)."""
    if not args or len(args) != 1 or not isinstance(args[0], dict):
        raise InvalidParams(f"{name} takes one argument: a params object")
    return structure(model, args[0])


def structure(model: type[Model], raw: dict[str, Any]) -> Model:
    """`raw` (a JSON object) as `model`, member by member in the order the model declares
    them; the first malformed one is InvalidParams naming it. The one converter of Stet's
    own LSP params."""
    params = model()
    for attr, key, check in model.WIRE:
        setattr(params, attr, check(raw, key))
    return params


def decision_params(decision: Decision, scope: str) -> type[Scoped]:
    """What a decision command of `scope` takes (see operations.Decision)."""
    if scope == "file":
        return OnFile
    if scope == "all":
        return OnAll
    if scope == "lines":
        return OnLines
    return OnHunks if decision.with_text else Reapply if decision.journal_only else OnHunksNoText
