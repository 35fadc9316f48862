"""How hunks look through standard LSP: diagnostics, code lenses, code actions, hover."""

from __future__ import annotations

import re
from typing import Any, cast

from lsprotocol import types

from ..domain.inert import inert
from ..domain.model import Hunk, Kind, inline_message
from ..domain.status import Decide, Status, moves, offered
from ..domain.text import line_body
from ..operations import DECISIONS
from ..present.ranges import hunk_range
from ..present.who import decided_apart, words


def _range(h: Hunk, end: tuple[int, int] | None = None) -> types.Range:
    r = hunk_range(h)
    start = types.Position(r["start"]["line"], r["start"]["character"])
    stop = types.Position(r["end"]["line"], r["end"]["character"])
    if end is not None:  # clamp to the document: some editors fail on ranges past its end
        if (stop.line, stop.character) > end:
            stop = types.Position(*end)
        if (start.line, start.character) > end:
            start = types.Position(*end)
    return types.Range(start, stop)


def _size(h: Hunk) -> str:
    return f"-{len(h.old)} +{len(h.replacement)}"


def _what(h: Hunk) -> str:
    """What accepting the hunk does, in a few words."""
    if h.kind == Kind.CREATE:
        return f"create this file ({len(h.new)} lines)"
    if h.kind == Kind.DELETE:
        return f"delete this file ({len(h.old)} lines would be lost)"
    if h.kind == Kind.RENAME:
        return f"rename this file to {(h.new_uri or '').rsplit('/', 1)[-1]}"
    return f"{_size(h)} lines"


def diagnostic_json(h: Hunk, end: tuple[int, int] | None, with_data: bool = True) -> dict[str, Any]:
    """A diagnostic as JSON, for publishing many at once without a converter pass: built
    directly (no lsprotocol objects), the same JSON as `diagnostic` gives (tested)."""
    message, severity = _describe(h)
    r = hunk_range(h)
    start = (r["start"]["line"], r["start"]["character"])
    stop = (r["end"]["line"], r["end"]["character"])
    if end is not None:  # clamped as in _range
        stop = min(stop, end)
        start = min(start, end)
    out = {
        "range": {"start": {"line": start[0], "character": start[1]}, "end": {"line": stop[0], "character": stop[1]}},
        "message": message,
        "severity": int(severity),
        "source": "stet",
        "code": h.id,
    }
    if with_data:  # only for clients that keep it (publishDiagnostics.dataSupport)
        out["data"] = {"hunkId": h.id, "version": h.version}
    return out


def _describe(h: Hunk) -> tuple[str, types.DiagnosticSeverity]:
    if h.gone:
        message = (
            "Stet: accepted and applied, but this change is no longer in the file (removed since: an undo, "
            "a checkout, another tool). Re-apply it, or undo the decision."
        )
        return message, types.DiagnosticSeverity.Warning
    if h.status == Status.STALE and h.problem:
        message = f"Stet: this proposed change cannot be carried out: {h.problem}. Reject it, or ask the agent again."
        return message, types.DiagnosticSeverity.Warning
    if h.status == Status.STALE:
        message = "Stet: this proposed change no longer applies (the text under it changed). Reject it, or ask the agent again."
        return message, types.DiagnosticSeverity.Warning
    state = "accepted, waiting to be applied" if h.status == Status.ACCEPTED else "proposed change"
    if h.kept and h.shows_new and h.status == Status.PENDING:
        state = "the agent's change, already in the file (accept keeps it, reject puts the old text back)"
    message = f"Stet: {state}: {_what(h)}" if h.kind != Kind.EDIT else f"Stet: {state} ({_size(h)} lines)"
    if h.status == Status.ACCEPTED and h.problem:
        message += f" ({h.problem})"
    if h.message:  # a long one is cut in a diagnostic: the hover and stet/proposal have the rest
        message += f": {h.message if len(h.message) <= 200 else h.message[:199] + '…'}"
    return message, types.DiagnosticSeverity.Information


def diagnostic(h: Hunk, end: tuple[int, int] | None) -> types.Diagnostic:
    message, severity = _describe(h)
    return types.Diagnostic(
        range=_range(h, end),
        message=message,
        severity=severity,
        source="stet",
        code=h.id,
        data={"hunkId": h.id, "version": h.version},
    )


def _cmd(title: str, name: str, arg: dict[str, Any]) -> types.Command:
    return types.Command(title=title, command=name, arguments=[arg])


# The decision kinds by action: their LSP commands (`stet.accept`, `stet.acceptFile`...).
_DECISIONS = {d.action: d for d in DECISIONS}


def _command(action: Decide, scope: str = "hunks") -> str:
    return _DECISIONS[action].lsp_command(scope)


def _lens_title(h: Hunk, action: Decide, name: str | None = None) -> str:
    """A lens button's title; `name` (when another hunk's buttons share its line) follows the
    verb, so the titles still start with "Accept" / "Reject"."""
    n = f" {name}" if name else ""
    kept = h.kept and h.shows_new  # the agent's text is there already
    if action == Decide.ACCEPT:
        if h.status == Status.ACCEPTED:
            return f"Accept{n} (retry applying)"
        label = _size(h) if h.kind == Kind.EDIT else _what(h).split(" (")[0]
        return f"Accept{n} (keep: {label})" if kept else f"Accept{n} ({label})"
    if action == Decide.REJECT:
        if h.status == Status.STALE:
            return f"Reject{n} (no longer applies)"
        return f"Reject{n} (put the old text back)" if kept else f"Reject{n}"
    if action == Decide.UNDO:
        if h.status == Status.ACCEPTED:
            return f"Undo accept of{n}" if n else "Undo accept"
        return f"Undo decision on{n}" if n else "Undo decision"
    if action == Decide.REAPPLY:
        return f"Re-apply{n} (removed since)"
    return action.capitalize() + n  # a decision kind without words of its own here


def split_roles(hunks: list[Hunk]) -> dict[str, str]:
    """Each part and rest of a hunk decided in parts (its superseded original names them)."""
    roles: dict[str, str] = {}
    for h in hunks:
        if h.parts is not None:
            roles[h.parts[0]], roles[h.parts[1]] = "part", "rest"
    return roles


def _row_order(h: Hunk) -> tuple[int, bool, int, int, str]:
    """Hunks sharing a line: open before stale, then the shorter first, then by id (the extension
    orders and numbers them alike: client-extension/src/logic/parts.ts, rowNames)."""
    end = hunk_range(h)["end"]
    return (h.line, h.status == Status.STALE, end["line"], end["character"], h.id)


def _names(hunks: list[Hunk], roles: dict[str, str]) -> dict[str, str]:
    """A short name for each hunk whose lenses share a line with another hunk's: an editor draws
    all the lenses of a line as one row (after undoing a part, the part and the stale rest start
    on the same line), so each button says whose it is. Hunks alone on their line: no name."""
    by_line: dict[int, list[Hunk]] = {}
    for h in sorted(hunks, key=_row_order):
        if h.shown:
            by_line.setdefault(h.line, []).append(h)
    names: dict[str, str] = {}
    for row in by_line.values():
        if len(row) < 2:
            continue
        wanted = [roles.get(h.id, "change") for h in row]
        for i, (h, name) in enumerate(zip(row, wanted, strict=True)):
            twice = wanted.count(name) > 1
            names[h.id] = f"{name} {wanted[: i + 1].count(name)}" if twice else name
    return names


def code_lenses(hunks: list[Hunk], client_uri: str, roles: dict[str, str] | None = None) -> list[types.CodeLens]:
    """Above the file, accept and reject of every hunk they move on (when there are several);
    above each hunk shown, what domain.status offers for it (accept retries an accepted one).
    `roles`: the parts and rests among `hunks` (split_roles), to name them when they share a line."""
    lenses = []
    at_top = types.Range(types.Position(0, 0), types.Position(0, 0))
    if len(hunks) >= 2:
        for action, verb in ((Decide.ACCEPT, "Accept"), (Decide.REJECT, "Reject")):
            n = sum(moves(action, h.status) for h in hunks)
            if n:
                lenses.append(
                    types.CodeLens(at_top, _cmd(f"{verb} all ({n})", _command(action, "file"), {"uri": client_uri}))
                )
    names = _names(hunks, roles or {}) if len(hunks) >= 2 else {}
    # On a shared line the open hunk's buttons come first, the stale one's after them.
    for h in sorted(hunks, key=_row_order) if names else hunks:
        if not h.shown:
            continue
        here = types.Range(types.Position(h.line, 0), types.Position(h.line, 0))
        ids = {"hunkIds": [h.id]}
        for action in offered(h.status, h.in_file, retry=True):
            lenses.append(types.CodeLens(here, _cmd(_lens_title(h, action, names.get(h.id)), _command(action), ids)))
    return lenses


def covers(h: Hunk, first: int, last: int) -> bool:
    """Does the hunk's span (at least its first line) meet lines first..last?"""
    span = max(1, len(h.anchored_text()))
    return h.line <= last and first <= h.line + span - 1


def selected_lines(h: Hunk, first: int, last: int) -> list[list[int]] | None:
    """The hunk's old lines (0-based, as one [first, last] range) that a selection of lines
    first..last covers, when it is some of them - not none, not the whole hunk - and the
    document shows them (a pending edit, not kept)."""
    if h.status != Status.PENDING or h.kind != Kind.EDIT or h.kept or h.shows_new or not h.old:
        return None
    lo, hi = max(first, h.line) - h.line, min(last, h.line + len(h.old) - 1) - h.line
    if lo > hi or (lo == 0 and hi == len(h.old) - 1 and not h.new):
        return None
    return [[lo, hi]]


def lines_actions(h: Hunk, first: int, last: int, diag: list[types.Diagnostic]) -> list[types.CodeAction]:
    """Accept or reject the selected old lines of a hunk (git gui's Stage Lines: the selected
    lines are removed; none of the new lines is added)."""
    old = selected_lines(h, first, last)
    if old is None:
        return []
    lines = {"hunkId": h.id, "old": old, "new": []}
    return [
        types.CodeAction(
            title=f"Stet: {d.action} selected lines",
            kind=types.CodeActionKind.QuickFix,
            diagnostics=diag,
            command=_cmd(f"{d.action.capitalize()} selected lines", d.lsp_command("lines"), lines),
        )
        for d in DECISIONS
        if "lines" in d.scopes
    ]


def _action_titles(h: Hunk, action: Decide) -> tuple[str, str, bool | None]:
    """A code action's title, its command's, and whether it is the preferred one."""
    if action == Decide.ACCEPT:
        return f"Stet: accept this change ({_what(h)})", "Accept", True
    if action == Decide.REJECT:
        return "Stet: reject this change", "Reject", None
    if action == Decide.REAPPLY:
        return "Stet: re-apply this accepted change (it was removed from the file)", "Re-apply", True
    if action == Decide.UNDO and h.status == Status.ACCEPTED:
        return "Stet: undo accepting this change", "Undo", None
    if action == Decide.UNDO:
        return "Stet: undo the decision (back to pending; nothing is reverted)", "Undo decision", None
    return f"Stet: {action} this change", action.capitalize(), None  # a kind without words of its own


def code_actions(
    hunks: list[Hunk],
    client_uri: str,
    first: int,
    last: int,
    end: tuple[int, int] | None,
    selected: tuple[int, int] | None = None,
) -> list[types.CodeAction]:
    """`selected`: the lines (first, last) of a selection (not a cursor): some lines of a hunk
    under it can be decided."""
    actions = []
    here = [h for h in hunks if covers(h, first, last)]
    for h in here:
        ids = {"hunkIds": [h.id]}
        diag = [diagnostic(h, end)]
        if selected is not None:
            actions += lines_actions(h, *selected, diag)
        if not h.shown:
            continue
        for action in offered(h.status, h.in_file):
            title, short, preferred = _action_titles(h, action)
            actions.append(
                types.CodeAction(
                    title=title,
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=diag,
                    is_preferred=preferred,
                    command=_cmd(short, _command(action), ids),
                )
            )
    if here and len(hunks) >= 2:
        actions.append(
            types.CodeAction(
                title=f"Stet: accept all changes in this file ({sum(moves(Decide.ACCEPT, h.status) for h in hunks)})",
                kind=types.CodeActionKind.QuickFix,
                command=_cmd("Accept all", _command(Decide.ACCEPT, "file"), {"uri": client_uri}),
            )
        )
        actions.append(
            types.CodeAction(
                title="Stet: reject all changes in this file",
                kind=types.CodeActionKind.QuickFix,
                command=_cmd("Reject all", _command(Decide.REJECT, "file"), {"uri": client_uri}),
            )
        )
    return actions


def diff_block(h: Hunk) -> str:
    if h.kind == Kind.RENAME:
        return f"rename from {h.uri}\nrename to {h.new_uri}"
    lines = [f"@@ -{h.line + 1},{len(h.old)} +{h.line + 1},{len(h.replacement)} @@ {h.status.value}"]
    if h.kind in (Kind.CREATE, Kind.DELETE):
        lines.insert(0, f"{h.kind} file")
    lines += ["-" + line_body(x) for x in h.old]
    lines += ["+" + line_body(x) for x in h.replacement]
    return "\n".join(lines)


_MARKDOWN = re.compile(r"([!-/:-@\[-`{-~])")  # every ASCII punctuation mark (CommonMark escapes each)


def _md(text: str) -> str:
    """Text someone else wrote, shown as it is in Markdown (each punctuation mark escaped: no
    link, autolink, emphasis or HTML made of it) and inert (domain/inert.py)."""
    return _MARKDOWN.sub(r"\\\1", inert(text))


def hover(h: Hunk, markdown: bool = True) -> types.Hover:
    said = words(h)  # who decided and proposed it, when not plain
    if not markdown:
        head = " · ".join([f"Stet · proposal {h.proposal_id} · hunk {h.id} · {h.status.value}", *said])
        text = f"{head}\n\n{diff_block(h)}"
        return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.PlainText, value=text), range=_range(h))
    head = f"**Stet** · proposal `{h.proposal_id}` · hunk `{h.id}` · {h.status.value}"
    head += "".join(f" · {_md(w)}" for w in said)
    if h.message:
        message, cut = inline_message(h.message)
        head += f"\n\n{message}" + (f"\n\n(the whole message: `stet/proposal` {h.proposal_id})" if cut else "")
    fence = "```"
    while fence in h.old_text or fence in "".join(h.replacement):
        fence += "`"
    return types.Hover(
        contents=types.MarkupContent(
            kind=types.MarkupKind.Markdown, value=f"{head}\n\n{fence}diff\n{diff_block(h)}\n{fence}"
        ),
        range=_range(h),
    )


def hover_at(hunks: list[Hunk], line: int, markdown: bool = True) -> types.Hover | None:
    """The hover of every hunk at a line the developer is shown, or that someone else decided
    (a commit, a rejection sent back to the agent: `who.decided_apart`), the open ones before the
    stale ones (after undoing a part, the part and the stale rest cover the same lines: both are
    told)."""
    here = sorted(
        (h for h in hunks if (h.shown or decided_apart(h)) and covers(h, line, line)),
        key=lambda h: h.status == Status.STALE,
    )
    if not here:
        return None
    first = hover(here[0], markdown)
    if len(here) == 1:
        return first
    rule = "\n\n---\n\n" if markdown else "\n\n"
    value = rule.join(cast(types.MarkupContent, hover(h, markdown).contents).value for h in here)
    return types.Hover(
        contents=types.MarkupContent(kind=cast(types.MarkupContent, first.contents).kind, value=value),
        range=first.range,
    )
