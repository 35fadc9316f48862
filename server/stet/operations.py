"""Every operation Stet offers, described once: its name, its typed params, whether it
changes the review, and which doors offer it (LSP command or request, MCP tool, CLI
subcommand). The LSP server, the MCP server and the `stet` parser register what they offer
from these tables; each door's module only parses, calls and presents.

A new decision kind is a row of DECISIONS (plus its rule in domain/status and
review/deciding). This module is read by the CLI at every start: stdlib only.
"""

from __future__ import annotations

from .domain.status import Decide, Status
from .errors import InvalidParams
from .fields import obj, opt_str, req_str

TYPE_CHECKING = False  # `typing` and `dataclasses` cost the CLI's start: types for mypy only
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar

    Check = Callable[[dict[str, Any], str], Any]
    Wire = tuple[tuple[str, str, Check], ...]
    Model = TypeVar("Model", bound="Params")

# --- the typed params of Stet's own LSP methods, and the one place raw JSON becomes them ---


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


# --- the tables ---


class Decision:
    """A decision kind. Over LSP it is the command `stet.<action>` on hunk ids, plus
    `stet.<action>File` / `stet.<action>All` / `stet.<action>Lines` for the other scopes it
    offers; in the CLI, `stet <action>` with hunk ids (and --file / --proposal / --task, and
    --old / --new for some lines of one hunk, when it has those scopes)."""

    def __init__(
        self,
        action: Decide,
        help: str,  # the CLI's help and description
        scopes: tuple[str, ...] = ("hunks",),
        with_text: bool = False,  # takes the developer's own `text` for the hunk
        journal_only: bool = False,  # takes no versions or feedback: it only puts back what was decided
    ) -> None:
        self.action, self.help, self.scopes = action, help, scopes
        self.with_text, self.journal_only = with_text, journal_only

    def lsp_command(self, scope: str) -> str:
        return f"stet.{self.action}" + {"hunks": "", "file": "File", "all": "All", "lines": "Lines"}[scope]

    def params(self, scope: str) -> type[Scoped]:
        if scope == "file":
            return OnFile
        if scope == "all":
            return OnAll
        if scope == "lines":
            return OnLines
        return OnHunks if self.with_text else Reapply if self.journal_only else OnHunksNoText


DECISIONS = (
    Decision(
        Decide.ACCEPT,
        "accept hunks (or some lines of one: --old/--new): the edit is written into the file, exactly once",
        ("hunks", "file", "all", "lines"),
        True,
    ),
    Decision(
        Decide.REJECT,
        "reject hunks (or some lines of one: --old/--new), optionally saying why (--feedback)",
        ("hunks", "file", "all", "lines"),
    ),
    Decision(Decide.UNDO, "back to pending; an applied hunk's edit is reverted (if it is gone already, nothing is)"),
    Decision(
        Decide.REAPPLY,
        "put back applied hunks whose text was removed from the file since, where the old text still is",
        journal_only=True,
    ),
)


class Operation:
    """One operation and the doors that offer it: `lsp` an LSP request method (decisions are
    commands: see DECISIONS), `mcp` an MCP tool, `cli` a `stet` subcommand. `params` is the
    typed request of the LSP door (None: the operation checks its own JSON, as a proposal
    does); `mutating`: committed before the answer, idempotent by requestId."""

    def __init__(
        self,
        name: str,
        lsp: str | None = None,
        mcp: str | None = None,
        cli: str | None = None,
        params: type[Params] | None = None,
        mutating: bool = False,
    ) -> None:
        self.name, self.lsp, self.mcp, self.cli = name, lsp, mcp, cli
        self.params, self.mutating = params, mutating


OPERATIONS = (
    Operation("propose", lsp="stet/propose", cli="propose", mutating=True),
    Operation("list_hunks", lsp="stet/listHunks", cli="status", params=ListHunks),
    Operation("proposal", lsp="stet/proposal", params=ProposalQuery),
    Operation("show", cli="show"),
    *(Operation(d.action, cli=d.action, mutating=True) for d in DECISIONS),
    Operation("log", cli="log"),
    Operation("pull", cli="pull", mutating=True),
    Operation("export", cli="export"),
    Operation("start_task", mcp="start_task", cli="task", mutating=True),
    Operation("list_tasks", mcp="list_tasks"),
    Operation("task_context", lsp="stet/taskContext", mcp="get_task_context", cli="resume", params=TaskContextQuery),
    Operation("record_step", mcp="record_step", mutating=True),
    Operation("record_note", mcp="record_note", mutating=True),
    Operation("record_files_read", mcp="record_files_read", mutating=True),
    Operation("propose_edits", mcp="propose_edits", mutating=True),
    Operation("propose_patch", mcp="propose_patch", mutating=True),
    Operation("review_status", mcp="review_status"),
    Operation("finish_task", mcp="finish_task", mutating=True),
)


def offered_by(door: str) -> list[Operation]:
    """The operations a door ("lsp", "mcp" or "cli") offers, in the table's order (the order
    MCP lists its tools in)."""
    return [op for op in OPERATIONS if getattr(op, door) is not None]
