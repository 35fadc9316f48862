"""The capture commands: `stet capture`, `stet snapshot`, `stet run`.

For agents that write files themselves: their edits are captured into a proposal and the
files get their baseline back (or keep the agent's version, `--keep`), in one durable step.
"""

from __future__ import annotations

import argparse
import shlex

from ..domain import headline
from ..domain.inert import inert, shown
from .output import one_line, print_hunks, print_json

TYPE_CHECKING = False  # types for mypy only
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TextIO

    from ..domain.shapes import JSON
    from .call import Call
    from .parser import Parents, Sub

INDEX_BASE = "index"
PHASES = ("begin", "finish")
BEGUN = "stet-run-begun"  # the first field of `begin`'s answer (client.py reads it)


def _scope() -> argparse.ArgumentParser:
    """The options `capture` and `run` share."""
    scope = argparse.ArgumentParser(add_help=False)
    scope.add_argument(
        "--task", help="the agent's task: its snapshot is the baseline, its hunks are checked for repeats"
    )
    scope.add_argument("--message", "-m", help="the rationale shown to the developer")
    scope.add_argument("--agent", help="the agent's name")
    scope.add_argument(
        "--keep",
        action="store_true",
        help="leave the agent's version in the files; the review decides (reject puts the baseline back)",
    )
    return scope


def add_capture(sub: Sub, o: Parents, name: str) -> None:
    p = sub.add_parser(
        name,
        parents=[o.common, o.as_json, _scope()],
        help="turn what an agent wrote into the files into a proposal, and put the baseline back",
        description="Compare the files with the baseline (the task's snapshot if there is one, else git's index, "
        "or --base REF) and propose every difference - edits, created, deleted and renamed files - for review; "
        "the files get the baseline back in the same durable step (or keep the agent's version: --keep). "
        "Files it cannot capture (binary, symlinks, changed by someone else in the agent's lines) are left as they "
        "are, with a message (exit 1). Capturing twice adds nothing.",
    )
    p.add_argument("paths", nargs="*", metavar="PATH", help="only these files or folders (default: everything)")
    p.add_argument("--id", help="the proposal id (default: derived from what is captured)")
    p.add_argument(
        "--base",
        nargs="?",
        const=INDEX_BASE,
        metavar="REF",
        help="compare with git: the index (no value), or a commit such as HEAD, even when a snapshot exists",
    )


def add_snapshot(sub: Sub, o: Parents, name: str) -> None:
    p = sub.add_parser(
        name,
        parents=[o.common, o.as_json, o.mutation],
        help="record files as they are before an agent touches them (the baseline of the next capture)",
        description="Record the content of files (or folders) now, for a capture to compare with; a file already "
        "recorded keeps its first content. --all records the whole workspace (files it does not list count as "
        "created by the agent). Kept in .stet/snapshots/ until a capture uses them or the task ends.",
    )
    p.add_argument("paths", nargs="*", metavar="PATH", help="files or folders")
    p.add_argument("--all", action="store_true", help="the whole workspace")
    p.add_argument("--task", help="the task the snapshot is for (default: none)")


def add_run(sub: Sub, o: Parents, name: str) -> None:
    p = sub.add_parser(
        name,
        parents=[o.common, _scope()],
        help="run an agent command, then capture what it wrote: stet run [--task T] [--worktree] -- CMD ARGS...",
        description="Snapshot the workspace, run the command (its output untouched), then capture what it changed. "
        "Exits with the command's exit code; when it succeeded but a file could not be captured (binary, a symlink, "
        "too large: each named on stderr), exit 1. With --worktree the agent works in a temporary git worktree at "
        "HEAD plus the accepted-but-uncommitted changes, so your files never change while it works (relative paths "
        "in its command line still name what they name here); its result is proposed into the workspace and the "
        "worktree removed (kept, with how to remove it, when the agent failed or not everything could be proposed). "
        "SIGTERM is passed on to the agent.",
    )
    p.add_argument("--worktree", action="store_true", help="let the agent work in a temporary git worktree")
    # The thin client's halves of an in-place run (stet/resident/client.py): the resident takes
    # the baseline (`begin`), the client runs the agent itself, then `finish` captures, in the
    # resident or, when it is gone, in the client's own process. Not for people: not shown.
    p.add_argument("--phase", choices=PHASES, help=argparse.SUPPRESS)
    p.add_argument("--code", type=int, default=0, help=argparse.SUPPRESS)
    p.add_argument("argv", nargs=argparse.REMAINDER, metavar="-- CMD ARGS", help="the agent's command")


def _report(answer: JSON, stream: TextIO | None) -> None:
    if stream is None:
        return
    for r in answer.get("refused", ()):
        print(f"stet: {shown(r['path'])}: {inert(r['why'])}", file=stream)
    for path in answer.get("left", ()):
        print(f"stet: {shown(path)}: changed again while being restored; left as it is", file=stream)


def summary(answer: JSON) -> str:
    """One line saying what a capture did."""
    repeats = len(answer.get("alreadyProposed", ())) + len(answer.get("rejectedBefore", ()))
    again = f" ({repeats} change(s) proposed before, not again)" if repeats else ""
    if answer.get("proposalId") is None:
        return "nothing new to capture" + again
    if answer.get("baseline") == "worktree":
        where = "your files were not written"
    elif answer.get("keep"):
        where = "the agent's version stays in the files for review"
    else:
        where = "the files have their baseline back"
    files = {h["uri"] for h in answer["hunks"]}
    what = f"{len(answer['hunks'])} hunk(s) in {len(files)} file(s)" if answer["hunks"] else "no new hunks"
    return f"proposal {inert(answer['proposalId'])}: {what}{again} (baseline: {answer.get('baseline')}); {where}"


def rejected_lines(answer: JSON, rel: Callable[[str], str]) -> list[str]:
    """The changes the developer had rejected, with their feedback: not proposed again."""
    return [
        f"rejected before by the developer, not proposed again: {h['id']} {shown(rel(h['uri']))}: "
        f"{one_line(h['feedback'], 200) or '(no feedback)'}"
        for h in answer.get("rejectedBefore", ())
    ]


def failed(answer: JSON) -> bool:
    return bool(answer.get("refused") or answer.get("left"))


def left_out(answer: JSON, kept: bool = False) -> list[str]:
    """After a run: the files Stet did not capture or restore, in one line each kind
    (`kept`: the worktree the agent worked in is kept for the user)."""
    out = []
    refused = sorted(shown(r["path"]) for r in answer.get("refused", ()))
    if refused and answer.get("baseline") == "worktree" and kept:
        out.append(f"{len(refused)} file(s) not proposed, the agent's version is in the kept worktree: ")
    elif refused and answer.get("baseline") == "worktree":
        out.append(f"{len(refused)} not proposed (nothing of the worktree is kept): ")
    elif refused:
        out.append(f"{len(refused)} file(s) not captured, left as the agent left them: ")
    if out:
        out[0] += ", ".join(refused)
    left = sorted(shown(path) for path in answer.get("left", ()))
    if left:
        out.append(f"{len(left)} file(s) not restored, changed again meanwhile: " + ", ".join(left))
    return out


async def cmd_capture(args: argparse.Namespace, call: Call) -> int:
    from ..agents.capture import AUTO, Capture
    from ..present.proposal import captured
    from .session import opened

    async with opened(args, call, create=True) as review:
        done = await Capture(review).run(
            paths=[call.path(p) for p in args.paths],
            task_id=args.task,
            capture_id=args.id,
            message=args.message,
            agent=args.agent,
            keep=args.keep,
            base=args.base or AUTO,
        )
        answer = captured(done)
        if args.json:
            print_json(call, answer)
        else:
            call.out(summary(answer))
            if answer["hunks"]:
                print_hunks(call, review, [s["id"] for s in answer["hunks"]], False)
            for line in rejected_lines(answer, review.ws.rel):
                call.out(line)
        _report(answer, call.stderr)
    return 1 if failed(answer) else 0


async def cmd_snapshot(args: argparse.Namespace, call: Call) -> int:
    from ..agents.snapshots import Snapshots
    from ..present.proposal import snapped
    from .locate import Usage
    from .session import opened

    if bool(args.paths) == bool(args.all):
        raise Usage("give the files or folders to snapshot, or --all for the whole workspace")
    paths = None if args.all else [call.path(p) for p in args.paths]
    async with opened(args, call, create=True) as review:
        out = snapped(await Snapshots(review).take(args.task, paths, request_id=args.request_id))
    for note in out.get("notes", ()):
        call.say(f"stet: {inert(note)}")
    if args.json:
        print_json(call, out)
    else:
        call.out(f"snapshot{' of ' + inert(args.task) if args.task else ''}: {out['files']} file(s), {out['new']} new")
    return 0


async def cmd_run(args: argparse.Namespace, call: Call) -> int:
    from ..agents.run import Run
    from ..present.proposal import captured
    from .locate import Usage
    from .session import opened

    argv = args.argv[1:] if args.argv[:1] == ["--"] else args.argv
    if not argv:
        raise Usage("give the agent's command after --: stet run [--task T] [--worktree] -- CMD ARGS...")
    if args.worktree and args.keep:
        raise Usage("--keep and --worktree do not go together: with --worktree your files are never written")
    if args.worktree and args.phase:
        raise Usage("--phase is a part of a run in place (the thin client's), not of --worktree")
    name, start = headline.program(argv)  # `claude -p "fix it"`: claude; `python ../agent.py`: agent.py
    agent = args.agent or name
    message = args.message or headline.line(agent, headline.asked(argv[start:]))  # "claude: fix it"
    async with opened(args, call, create=True) as review:
        runner = Run(review, call.cwd, call.stderr)
        kept = None
        if args.phase == "begin":
            await runner.begin(args.task, keep=args.keep, message=message, agent=agent)
            # What the client needs to start the agent itself: NUL-separated, argv cannot hold one.
            if call.stdout is not None:
                call.stdout.write("\0".join([BEGUN, args.task or "", *argv]))
            return 0
        if args.phase == "finish":
            code = args.code
            done = await runner.finish(args.task, keep=args.keep, message=message, agent=agent)
        elif args.worktree:
            code, done, kept = await runner.in_worktree(argv, task_id=args.task, message=message, agent=agent)
        else:
            code, done = await runner.in_place(argv, task_id=args.task, keep=args.keep, message=message, agent=agent)
        answer = captured(done)
        _said(call, review.ws.rel, answer, code, kept)
    # The agent's own failure comes first; else files Stet refused are exit 1, as for `capture`.
    return code or (1 if failed(answer) else 0)


def _said(call: Call, rel: Callable[[str], str], answer: JSON, code: int, kept: str | None) -> None:
    """What a run tells on the call's stderr once it has captured."""
    from ..agents.run import say

    err = call.stderr
    say(summary(answer), err)
    for line in rejected_lines(answer, rel):
        say(line, err)
    _report(answer, err)
    for line in left_out(answer, kept is not None):
        say(line, err)
    if kept:
        why = f"the agent exited with code {code}" if code else "not everything could be proposed"
        say(
            f"the worktree is kept at {kept} ({why}); remove it with `git worktree remove --force {shlex.quote(kept)}`",
            err,
        )
