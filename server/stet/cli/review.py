"""The review commands: propose, status, show, log, accept / reject / undo, export."""

from __future__ import annotations

from ..domain.inert import inert, shown
from ..errors import InvalidParams, StetError, UnknownHunk
from .locate import Usage, locate
from .output import (
    colour,
    hunk_rows,
    on_terminal,
    one_line,
    paint,
    print_hunks,
    print_json,
    status_cell,
    table,
)
from .parser import DEFAULT_EXPORT

TAB = "\t"  # kept in a line of code as it is: it moves the cursor on, over nothing

TYPE_CHECKING = False  # types for mypy only
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Coroutine, Sequence
    from contextlib import AbstractAsyncContextManager

    from ..domain.decided import Decided, NotTaken
    from ..domain.model import Hunk
    from ..domain.shapes import JSON
    from ..domain.status import Status
    from ..review import Review
    from ..workspace.paths import Workspace
    from .call import Call

# What the commands below need beyond this is imported when they run: `stet status` usually
# reads the store without opening the review (see review/glance.py), so it loads no event loop.


def opened(args: argparse.Namespace, call: Call, create: bool = False) -> AbstractAsyncContextManager[Review]:
    from .session import opened

    return opened(args, call, create)


def _read_input(call: Call, name: str) -> str:
    from .. import limits
    from ..errors import TooLarge
    from . import hosting, inputs

    if call.host is not None and name != "-" and name not in call.inputs:
        # A resident has other descriptors than its caller and must never wait on a caller's
        # FIFO: it reads only what the caller read for it (stet/resident/client.py).
        raise hosting.InputElsewhere(name)
    try:
        data = inputs.take(call, name, limits.PATCH)
    except inputs.Unreadable as exc:
        raise Usage(f"cannot read {name}: {exc}") from None
    except inputs.Oversize:
        shown = "stdin" if name == "-" else name
        raise TooLarge(
            f"{shown} is larger than {limits.PATCH >> 20} MiB: propose the change in smaller parts"
        ) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidParams(f"{name}: not UTF-8 text (byte {exc.start}): binary input is not accepted") from None


async def cmd_propose(args: argparse.Namespace, call: Call) -> int:
    import json

    from ..agents import intake
    from ..present.proposal import proposed

    if bool(args.patch) == bool(args.edit):
        raise Usage("give exactly one of --patch FILE and --edit FILE ('-' reads stdin)")
    text = _read_input(call, args.patch or args.edit)
    # Bad input is refused before the store is even opened (or created): nothing is written.
    parsed = None
    if args.patch:
        parsed = intake.check_patch_text(text, args.strip)
    else:
        try:
            json.loads(text)
        except json.JSONDecodeError as exc:
            raise InvalidParams(f"{args.edit}: not JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    async with opened(args, call, create=True) as review:
        notes: list[str] = []
        if args.patch:
            made, notes = await intake.propose_patch(
                review,
                text,
                args.id,
                task_id=args.task,
                agent=args.agent,
                message=args.message,
                strip=args.strip,
                parsed=parsed,
            )
        else:
            try:
                data = json.loads(text)
            except json.JSONDecodeError as exc:
                raise InvalidParams(
                    f"{args.edit}: not JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
                ) from None
            if isinstance(data, dict) and "edit" in data:  # a whole stet/propose params object
                params = {**data}
                for key, value in (("taskId", args.task), ("agent", args.agent), ("message", args.message)):
                    if value is not None:
                        params[key] = value
                if args.id:
                    params["proposalId"] = args.id
                elif "proposalId" not in params:
                    params["proposalId"] = intake.default_id("edit", text)
            else:
                params = {
                    "proposalId": args.id or intake.default_id("edit", text),
                    "edit": data,
                    "taskId": args.task,
                    "agent": args.agent,
                    "message": args.message,
                }
            made = await intake.propose_params(review, params)
        answer = proposed(made)
        for note in notes:
            call.say(f"stet: note: {inert(note)}")
        if args.json:
            print_json(call, answer)
        else:
            call.out(f"proposal {inert(answer['proposalId'])}: {len(answer['hunks'])} hunk(s)")
            print_hunks(call, review, [s["id"] for s in answer["hunks"]], False)
            # Within a task, repeats of earlier hunks are not proposed again (docs/tasks.md).
            if answer.get("alreadyProposed"):
                call.out(
                    f"already proposed in this task, not again: {' '.join(h['id'] for h in answer['alreadyProposed'])}"
                )
            for h in answer.get("rejectedBefore", ()):
                call.out(
                    f"rejected before by the developer, not proposed again: {h['id']} {shown(review.ws.rel(h['uri']))}: "
                    f"{one_line(h['feedback'], 200) or '(no feedback)'}"
                )
    return 0


def _statuses(values: list[str] | None) -> set[Status] | None:
    from ..domain.status import Status

    if not values:
        return None
    names = [v.strip() for value in values for v in value.split(",") if v.strip()]
    try:
        return {Status(n) for n in names}
    except ValueError:
        raise Usage(f"unknown status in {', '.join(names)}: use {', '.join(s.value for s in Status)}") from None


class NoMatch(UnknownHunk):
    """A filter or id that matches nothing that exists: exit 1, like an unknown hunk."""

    name = "NoMatch"


async def _scope(call: Call, review: Review, proposal: str | None, task: str | None, file: str | None) -> str | None:
    """Check that each filter names something that exists; returns the file's uri (if given)."""
    from ..review.task_records import TaskRecords

    hunks = review.hunks.values()
    if proposal is not None and not any(h.proposal_id == proposal for h in hunks):
        if await review.require_store().proposal(proposal) is None:
            raise NoMatch(f"no proposal {proposal!r} in this store (`stet status --all` lists every hunk)")
    if task is not None and not any(h.task_id == task for h in hunks):
        if not await TaskRecords(review.state).exists(task):
            raise NoMatch(f"no task {task!r} in this store (`stet task list` lists the tasks)")
    if file is None:
        return None
    uri = review.ws.uri_for(call.path(file))
    if uri not in review.by_uri and not any(h.new_uri == uri for h in hunks):
        raise NoMatch(f"no hunk of {review.ws.rel(uri)} in this store")
    return uri


def cmd_status(args: argparse.Namespace, call: Call) -> int | Coroutine[object, object, int]:
    """Without filters that must be checked against the store, a glance
    at the store is enough when nothing needs bringing up to date; else the review opens."""
    if not (args.proposal or args.task or args.file or args.turn or call.host):
        from ..review.glance import glance
        from ..workspace.paths import Workspace

        db, roots = locate(args, False, call)
        hunks = glance(db, roots)
        if hunks is not None:
            if args.json:
                _print_json(call, args, Workspace(roots).roots[0], db, hunks)
            else:
                _print_status(call, args, Workspace(roots), hunks)
            return 0
    return _status(args, call)


async def _status(args: argparse.Namespace, call: Call) -> int:
    async with opened(args, call) as review:
        uri = await _scope(call, review, args.proposal, args.task, args.file)
        scoped = review.list(uri=uri, proposal_id=args.proposal, task_id=args.task)
        if args.turn:
            turn = await _turn(review, args.turn)
            scoped = [h for h in scoped if h.turn == turn]
        if not args.json:
            _print_status(call, args, review.ws, scoped)
            return 0
        _print_json(call, args, review.ws.roots[0], review.require_store().path, scoped)
    return 0


async def _turn(review: Review, spec: str) -> tuple[str, int]:
    """The turn `--turn` names: `last`, N (of the latest session's turns) or SESSION:N;
    InvalidParams (exit 2) for a turn that was never captured."""
    from ..review.telling import Told

    session, _, number = spec.rpartition(":")
    if spec != "last" and not (number.isdigit() and int(number) > 0):
        raise InvalidParams(f"--turn takes `last`, N or SESSION:N (N from 1), not {spec!r}")
    last = await Told(review.state).last_turn()
    if last is None:
        raise InvalidParams(
            "--turn: no turn was captured here yet (turns are what Claude Code's hooks capture: "
            "`stet integrate claude-code`)"
        )
    if spec == "last":
        return last
    if not session or session == last[0]:
        if int(number) > last[1]:
            raise InvalidParams(f"--turn {spec}: no such turn: the latest session ({last[0]}) has turns 1..{last[1]}")
        return last[0], int(number)
    turn = (session, int(number))
    if not any(h.turn == turn for h in review.list()):
        raise InvalidParams(f"--turn {spec}: no turn {number} of session {session} was captured here")
    return turn


def _print_json(call: Call, args: argparse.Namespace, root: str, db: str, scoped: Sequence[Hunk]) -> None:
    from ..present import hunk_json

    counts, gone = _counts(scoped)
    print_json(
        call,
        {
            "root": root,
            "db": db,
            "counts": counts,
            "appliedNotInFile": gone,
            "hunks": hunk_json.states(_listed(args, scoped)),
        },
    )


def _counts(scoped: Sequence[Hunk]) -> tuple[dict[str, int], int]:
    from ..domain.status import Status

    counts = dict.fromkeys(Status, 0)
    for h in scoped:
        counts[h.status] += 1
    return {s.value: n for s, n in counts.items()}, sum(1 for h in scoped if h.gone)


def _listed(args: argparse.Namespace, scoped: Sequence[Hunk]) -> list[Hunk]:
    statuses = _statuses(args.status)
    if statuses is not None:
        return [h for h in scoped if h.status in statuses]
    if args.all:
        return list(scoped)
    return [h for h in scoped if h.shown]  # what needs the developer: open, or applied and gone


def _print_status(call: Call, args: argparse.Namespace, ws: Workspace, scoped: Sequence[Hunk]) -> None:
    """The status table of `scoped` (the review's hunks, or the same read by a glance)."""
    hunks = _listed(args, scoped)
    counts, gone = _counts(scoped)
    coloured = colour(call)
    summary = ", ".join(paint(f"{n} {s}", s, coloured) for s, n in counts.items() if n)
    if gone:
        summary += f" ({gone} applied no longer in the file)"
    scope = " ".join(
        f"{k} {inert(v)}" for k, v in (("task", args.task), ("proposal", args.proposal), ("file", args.file)) if v
    )
    out = [f"{ws.roots[0]}{f' ({scope})' if scope else ''}: {summary or 'no hunks'}"]
    by_file: dict[str, list[Hunk]] = {}
    for h in hunks:
        by_file.setdefault(h.uri, []).append(h)
    rel = _rel_cache(ws)
    for file_uri, group in by_file.items():
        tally: dict[str, int] = {}
        for h in group:
            cell = status_cell(h)
            tally[cell] = tally.get(cell, 0) + 1
        out.append("")
        out.append(f"{rel(file_uri)}  ({', '.join(f'{n} {s}' for s, n in tally.items())})")
        rows = hunk_rows(rel, group, with_file=False)
        out.append("  " + table(rows, status_col=1, coloured=coloured).replace("\n", "\n  "))
    if not hunks and any(counts.values()) and not args.all:
        out.append("nothing open; `stet status --all` lists decided hunks too")
    call.out("\n".join(out))


def _rel_cache(ws: Workspace) -> Callable[[str], str]:
    """ws.rel as a table shows it, once per uri (a file's hunks share it)."""
    known: dict[str, str] = {}

    def rel(uri: str) -> str:
        if uri not in known:
            known[uri] = shown(ws.rel(uri))
        return known[uri]

    return rel


async def cmd_log(args: argparse.Namespace, call: Call) -> int:
    async with opened(args, call) as review:
        ops = await review.require_store().ops(after_lsn=args.since, limit=10**9)
        if args.limit is not None:
            ops = ops[-args.limit :]
        if args.json:
            print_json(
                call,
                {
                    "ops": [
                        {"lsn": o.lsn, "opId": o.op_id, "kind": o.kind, "args": o.args, "result": o.result, "at": o.at}
                        for o in ops
                    ]
                },
            )
            return 0
        rows = [["LSN", "AT", "KIND", "OP", "WHAT"]]
        for o in ops:
            what = []
            if o.args.get("proposalId"):
                what.append(f"proposal {o.args['proposalId']}")
            ids = o.args.get("hunkIds") or ((o.result or {}).get("hunkIds") if isinstance(o.result, dict) else None)
            if ids:
                what.append(f"{len(ids)} hunk(s): {' '.join(ids[:4])}{' …' if len(ids) > 4 else ''}")
            if o.args.get("feedback"):
                what.append(f"feedback: {one_line(o.args['feedback'], 40)}")
            rows.append([str(o.lsn), o.at, o.kind, o.op_id, "; ".join(what)])
        call.out(table(rows) if ops else "the operation log is empty")
    return 0


async def cmd_show(args: argparse.Namespace, call: Call) -> int:
    """A hunk's changed lines, numbered as --old and --new take them: -1..-m, then +1..+n."""
    async with opened(args, call) as review:
        h = review.hunks.get(args.id)
        if h is None:
            raise UnknownHunk(f"unknown hunk id(s): {args.id}", {"hunkIds": [args.id]})
        if args.json:
            from ..present import hunk_json

            print_json(call, {"hunk": hunk_json.state(h), "old": list(h.old), "new": list(h.new)})
            return 0
        from ..present.who import words

        said = "".join(f" · {w}" for w in words(h))  # who decided and proposed it, when not plain
        call.out(f"{h.id}  {shown(review.ws.rel(h.uri))}:{h.line + 1}  {h.status.value}{said}")
        for sign, lines in (("-", h.old), ("+", h.new)):
            for i, line in enumerate(lines, 1):
                body = line.rstrip("\r\n")
                end = "" if body != line else "  (no line end)"
                call.out(f"{sign}{i:<4} {inert(body, keep=TAB)}{end}")  # each line on its row
    return 0


async def _decide_lines(args: argparse.Namespace, call: Call) -> int:
    """accept / reject of some lines of one hunk (--old / --new): the part and the rest."""
    action = args.command
    if len(args.ids) != 1 or args.file or args.proposal or args.task:
        raise Usage(f"--old / --new {action} some lines of one hunk: give exactly one hunk id")
    async with opened(args, call) as review:
        try:
            done = await review.decide_lines(
                action,
                args.ids[0],
                args.old or [],
                args.new or [],
                feedback=getattr(args, "feedback", None),
                request_id=args.request_id,
            )
        except InvalidParams as exc:
            raise _in_line_numbers(exc) from None
        if args.json:
            from ..present.decision import split

            print_json(call, split(done))
        else:
            print_hunks(call, review, [h.id for h in (done.part, done.rest) if h is not None], False)
        if done.rest is None:
            call.say(f"stet: every changed line of {inert(args.ids[0])} was selected: the whole hunk was decided")
        missed = done.not_taken()
        _tell_not_taken(call, missed)
        return 1 if missed else 0


def _in_line_numbers(exc: InvalidParams) -> InvalidParams:
    """A range outside the hunk said as the user typed it: --old / --new and 1-based lines, as
    `stet show` numbers them (the protocol's message counts from 0)."""
    data = exc.data if isinstance(exc.data, dict) else {}
    side, rng, size, hunk = data.get("side"), data.get("range"), data.get("lines"), data.get("hunkId")
    if side not in ("old", "new") or not isinstance(rng, list) or not isinstance(size, int):
        return exc
    first, last = rng[0] + 1, rng[1] + 1
    typed = f"--{side} {first}" if first == last else f"--{side} {first}-{last}"
    sign = "-" if side == "old" else "+"
    has = f"its {side} lines are {sign}1..{sign}{size}" if size else f"it has no {side} lines"
    return InvalidParams(f"hunk {hunk}: {typed} is outside the hunk: {has} (see `stet show {hunk}`)", data)


async def cmd_decide(args: argparse.Namespace, call: Call) -> int:
    action = args.command
    if getattr(args, "old", None) is not None or getattr(args, "new", None) is not None:
        return await _decide_lines(args, call)
    scopes = [
        bool(args.ids),
        bool(getattr(args, "file", None)),
        bool(getattr(args, "proposal", None) or getattr(args, "task", None)),
    ]
    if sum(scopes) != 1:
        raise Usage(f"give hunk ids, or one of --file / --proposal / --task, to {action}")
    async with opened(args, call) as review:
        common = dict(request_id=args.request_id, feedback=getattr(args, "feedback", None))
        if args.ids:
            decided = await review.decide(action, args.ids, **common)
        else:
            proposal, task = getattr(args, "proposal", None), getattr(args, "task", None)
            uri = await _scope(call, review, proposal, task, getattr(args, "file", None))
            if uri is not None:
                decided = await review.decide(action, uri=uri, **common)
            else:
                decided = await review.decide(action, proposal_id=proposal, task_id=task, **common)
            if not decided.hunks:
                call.say(f"stet: nothing to {action}: no pending hunk in that scope")
        return _decided(call, review, decided, args.json)


def _decided(call: Call, review: Review, decided: Decided, as_json: bool, extra: JSON | None = None) -> int:
    """Print a decision's answer; exit 1 when its effect did not take on some hunk (the
    decision is recorded, but the file is not as it asked), each named on stderr with why,
    or when `extra` lists hunks not pulled."""
    from ..present.decision import not_taken

    missed = decided.not_taken()
    print_hunks(call, review, [h.id for h in decided.hunks], as_json, {**(extra or {}), "notTaken": not_taken(missed)})
    _tell_not_taken(call, missed)
    return 1 if missed or (extra or {}).get("notPulled") else 0


def _tell_not_taken(call: Call, missed: list[NotTaken]) -> None:
    for m in missed:
        call.say(f"stet: {m.hunk.id} did not take effect ({m.hunk.status.value}): {one_line(m.why, 300)}")


async def cmd_pull(args: argparse.Namespace, call: Call) -> int:
    """The applied hunks whose text is not in this checkout's files, put in where they can land;
    exit 1 when some cannot (each named, with what to do about this checkout)."""
    async with opened(args, call) as review:
        pulled = await review.pull(args.task, args.request_id)
        left = pulled.left
        if not pulled.hunks and not left:
            call.say("stet: nothing to pull: every applied hunk is in this checkout's files")
        for hid, why in left.items():
            call.say(f"stet: hunk {inert(hid)} not pulled: {inert(why)}")
        if args.json or pulled.hunks or not left:
            return _decided(
                call, review, pulled, args.json, {"notPulled": [{"id": h, "why": w} for h, w in left.items()]}
            )
    return 1 if left else 0


async def cmd_export(args: argparse.Namespace, call: Call) -> int:
    import asyncio

    from ..domain.export import export
    from ..domain.status import Status
    from ..workspace.files import read_text

    async with opened(args, call) as review:
        await _scope(call, review, args.proposal, args.task, None)
        statuses = _statuses(args.status) or {Status(s) for s in DEFAULT_EXPORT}
        hunks = review.list(statuses=statuses, proposal_id=args.proposal, task_id=args.task)

        def read(uri: str) -> str | None:
            try:
                return read_text(review.ws.path_of(uri))
            except StetError:
                return None

        result = await asyncio.to_thread(export, hunks, lambda u: review.ws.rel(u), read)
        diff, ids, skipped = result.diff, result.hunk_ids, result.skipped
        for hid, why in skipped:
            call.say(f"stet: skipped hunk {inert(hid)}: {inert(why)}")
        if args.output:
            with open(call.path(args.output), "w", encoding="utf-8", newline="") as f:
                f.write(diff)
        if args.json:
            print_json(call, {"diff": diff, "hunkIds": ids, "skipped": [{"id": i, "why": w} for i, w in skipped]})
        elif not args.output and call.stdout is not None:
            call.stdout.write(_readable(diff) if on_terminal(call) else diff)  # piped: the exact patch
            call.stdout.flush()
    return 0


def _readable(diff: str) -> str:
    """A patch for a person at a terminal: each line made inert on its own row (a CR too)."""
    return "\n".join(inert(line, keep=TAB) for line in diff.split("\n"))
