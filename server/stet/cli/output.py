"""How the command line prints: tables, colours, hunks, JSON."""

from __future__ import annotations

from ..domain.inert import inert, shown
from ..present.who import decided_by

TYPE_CHECKING = False  # types for mypy only: the CLI imports what a command needs when it runs
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from ..domain.model import Hunk
    from ..domain.shapes import JSON
    from ..review import Review
    from .call import Call

COLOURS = {
    "pending": "33",
    "accepted": "36",
    "applied": "32",
    "rejected": "31",
    "stale": "35",
    "superseded": "2",
    "applied (not in file)": "35",
}


def on_terminal(call: Call) -> bool:
    out = call.stdout  # None when the shell closed it (`stet status >&-`)
    return out is not None and out.isatty()


def colour(call: Call) -> bool:
    return on_terminal(call) and not call.env.get("NO_COLOR") and call.env.get("TERM") != "dumb"


def paint(text: str, status: str, coloured: bool) -> str:
    code = COLOURS.get(status)
    return f"\x1b[{code}m{text}\x1b[0m" if code and coloured else text


def table(rows: list[list[str]], status_col: int | None = None, coloured: bool = False) -> str:
    """Rows as aligned columns. Every cell is made inert (an agent's text in it cannot drive the
    terminal or break the row); the colours are Stet's own, painted after (`coloured`: the status
    column's, when the call's output is a terminal that takes them: `colour`)."""
    rows = [[cell if cell.isprintable() else inert(cell) for cell in r] for r in rows]
    widths = [max(map(len, column)) for column in zip(*rows)]
    coloured = status_col is not None and coloured
    if not coloured and widths and all(len(r) == len(widths) for r in rows):
        # One format for every row (a status lists thousands): the last column is not padded.
        line = "  ".join([*(f"{{:<{w}}}" for w in widths[:-1]), "{}"])
        return "\n".join([line.format(*r).rstrip() for r in rows])
    out = []
    for n, r in enumerate(rows):
        cells = []
        for i, cell in enumerate(r):
            text = cell.ljust(widths[i]) if i < len(r) - 1 else cell
            if n and i == status_col:
                text = paint(text, cell, coloured)
            cells.append(text)
        out.append("  ".join(cells).rstrip())
    return "\n".join(out)


def one_line(text: str | None, width: int = 60) -> str:
    """An agent's text (a message, feedback, why) in one line of at most `width` characters,
    made inert."""
    if not text:
        return ""
    text = inert(" ".join(text.split()))
    return text if len(text) <= width else text[: width - 1] + "…"


def status_cell(h: Hunk) -> str:
    """What the STATUS column says of a hunk. (`_value_`: Enum's `value` is a slow property,
    and a status lists thousands of hunks.)"""
    return "applied (not in file)" if h.gone else h.status._value_


def note_cell(h: Hunk) -> str:
    """What the MESSAGE / FEEDBACK column says of a hunk: who decided it when not the developer
    ("accepted by commit abc1234"), the feedback (and whether it was sent back to the agent),
    else the agent's message."""
    note = f"feedback: {h.feedback}" if h.feedback else h.message
    if h.feedback and h.is_sent_back:
        note = f"{note} (sent back to the agent)"
    by = decided_by(h)
    if by is not None:
        note = f"{by} · {note}" if note else by
    return one_line(note) if note else ""


def hunk_rows(rel: Callable[[str], str], hunks: Iterable[Hunk], with_file: bool = True) -> list[list[str]]:
    """Table rows of hunks; `rel` gives the path a person would type for a uri. An AGENT column
    when the agent of one of them is known (who proposed it)."""
    hunks = list(hunks)
    agents = any(h.agent is not None for h in hunks)
    rows = [
        ["HUNK", "STATUS"]
        + (["FILE"] if with_file else [])
        + ["LINE", "CHANGE"]
        + (["AGENT"] if agents else [])
        + ["MESSAGE / FEEDBACK"]
    ]
    for h in hunks:
        where = rel(h.uri) + (f" -> {rel(h.new_uri)}" if h.new_uri else "")
        change = h.kind if h.kind != "edit" else f"-{len(h.old)} +{len(h.replacement)}"
        if h.kept and h.status.value == "pending":
            change += " kept"  # the agent's text is in the file, waiting for review
        who = [one_line(h.agent, 24)] if agents else []
        rows.append(
            [h.id, status_cell(h)] + ([where] if with_file else []) + [str(h.line + 1), change, *who, note_cell(h)]
        )
    return rows


def print_json(call: Call, data: object) -> None:
    """Indented for a person at a terminal; one compact line for a pipe (scripts, agents), as
    `gh` does. The compact line is orjson's, byte for byte what json's would be and ten times
    sooner (1,000 hunks: 0.3 ms, json's C encoder 3.4 ms; docs/BENCHMARKS.md), json's where
    orjson declines (a lone surrogate, an integer beyond 64 bits)."""
    import json

    if on_terminal(call):
        call.out(json.dumps(data, indent=2, ensure_ascii=False))
        return
    import orjson

    try:
        line = orjson.dumps(data)
    except (orjson.JSONEncodeError, TypeError):
        call.out(json.dumps(data, ensure_ascii=False, separators=(",", ":")))
        return
    out = call.stdout
    raw = getattr(out, "buffer", None)
    if out is None or raw is None:  # a stream of text only
        call.out(line.decode())
        return
    out.flush()
    raw.write(line + b"\n")
    raw.flush()


def print_hunks(call: Call, review: Review, ids: Iterable[str], as_json: bool, extra: JSON | None = None) -> None:
    """The review's hunks of these ids as they are now: a table, or `{...extra, hunks}` in JSON."""
    hunks = [review.hunks[i] for i in ids]
    if as_json:
        from ..present import hunk_json

        print_json(call, {**(extra or {}), "hunks": hunk_json.states(hunks)})
        return
    if hunks:
        call.out(table(hunk_rows(lambda uri: shown(review.ws.rel(uri)), hunks), status_col=1, coloured=colour(call)))
    else:
        call.out("no hunks")
