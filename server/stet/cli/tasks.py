"""The task commands of the command line: `stet task ...` and `stet resume`.

`add_task`, `add_resume` and `add_mcp` add their parsers (and `stet mcp`'s); `cmd_task` and `cmd_resume` are
coroutines of the parsed arguments that open the store like every other command.
"""

from __future__ import annotations

from ..domain.inert import inert, shown
from ..domain.task import NOTE_KINDS, STEP_STATUSES, TASK_STATUSES
from .output import print_json

TYPE_CHECKING = False  # types for mypy only
if TYPE_CHECKING:
    import argparse

    from .call import Call
    from .parser import Parents, Sub


def add_task(sub: Sub, o: Parents, name: str) -> None:
    common, as_json, mutation = o.common, o.as_json, o.mutation
    p_task = sub.add_parser(
        name,
        parents=[common],
        help="record an agent's task: start, steps, decisions, files read, done",
        description="The task model: what an agent is doing, so that another can carry it on (see `stet resume`).",
    )
    tsub = p_task.add_subparsers(dest="task_command", required=True, metavar="SUBCOMMAND")

    p = tsub.add_parser("start", parents=[common, as_json, mutation], help="start a task; prints its id")
    p.add_argument("title", help="a short title")
    p.add_argument("--goal", "-g", help="what the developer asked for, and what done means")
    p.add_argument("--id", dest="task_id", help="the task id (default: made from the title)")
    p.add_argument("--agent", help="the agent's name")
    p.add_argument(
        "--snapshot",
        action="store_true",
        help="record every file of the workspace now: the baseline `stet capture --task` compares with",
    )

    p = tsub.add_parser(
        "step",
        parents=[common, as_json, mutation],
        help="add a step or change its status",
        description="Add a step (a new text) or change one: by its exact text, or by number with --n.",
    )
    p.add_argument("task", metavar="TASK")
    p.add_argument("text", nargs="?", help="the step")
    p.add_argument("--status", "-s", choices=STEP_STATUSES, help="its status (a new step: pending)")
    p.add_argument("--n", type=int, metavar="N", help="the number of an existing step")
    _add_task_records(tsub, common, as_json, mutation)


def _add_task_records(
    tsub: argparse._SubParsersAction[argparse.ArgumentParser],
    common: argparse.ArgumentParser,
    as_json: argparse.ArgumentParser,
    mutation: argparse.ArgumentParser,
) -> None:
    """`stet task note | read | done | list`."""
    p = tsub.add_parser(
        "note",
        parents=[common, as_json, mutation],
        help="record a decision and why, a question, or an answer",
        description="Record a decision (the default), a question for the developer (--question), "
        "the answer to question N (--answers N), or a plain note (--kind note).",
    )
    p.add_argument("task", metavar="TASK")
    p.add_argument("text")
    p.add_argument("--why", "-w", help="the reason for a decision")
    p.add_argument("--kind", "-k", choices=NOTE_KINDS, help="what the note is (default: decision)")
    p.add_argument("--question", action="store_true", help="same as --kind question")
    p.add_argument("--answers", type=int, metavar="N", help="this note answers question N")

    p = tsub.add_parser(
        "read",
        parents=[common, as_json, mutation],
        help="record files the agent read (with their content hash now)",
    )
    p.add_argument("task", metavar="TASK")
    p.add_argument("paths", nargs="+", metavar="PATH")

    p = tsub.add_parser("done", parents=[common, as_json, mutation], help="close a task (done, or --abandon)")
    p.add_argument("task", metavar="TASK")
    p.add_argument("--abandon", action="store_true", help="close it as abandoned")
    p.add_argument("--reopen", action="store_true", help="open a closed task again")
    p.add_argument("--summary", help="one line: what was achieved, or why it stopped")

    p = tsub.add_parser("list", parents=[common, as_json], help="the tasks, with their hunk counts")
    p.add_argument("--status", choices=TASK_STATUSES, help="only tasks with this status")


def add_resume(sub: Sub, o: Parents, name: str) -> None:
    p = sub.add_parser(
        name,
        parents=[o.common, o.as_json],
        help="everything a new agent worker needs to carry a task on (Markdown; --json for programs)",
        description="Print a task's context: goal, steps, decisions, files read (changed since?), hunks by "
        "status with the developer's feedback and changes, open questions.",
    )
    p.add_argument("task", metavar="TASK")


def add_mcp(sub: Sub, o: Parents, name: str) -> None:
    p = sub.add_parser(
        name,
        parents=[o.common],
        help="run the MCP server on stdio, for agents (Claude Code, Claude Desktop, Cline, ...)",
        description="Serve Stet's tools over the Model Context Protocol on stdio: tasks, proposals, review status.",
    )
    p.add_argument("--agent", help="the name recorded for this agent's tasks and proposals")
    p.add_argument(
        "--http",
        metavar="[HOST:]PORT",
        help="serve over streamable HTTP instead of stdio, for agents on other machines (host default "
        "127.0.0.1); every request needs the bearer token kept in .stet/mcp-token",
    )
    p.add_argument(
        "--print-token", action="store_true", help="print the bearer token for --http (made if missing) and exit"
    )


async def cmd_task(args: argparse.Namespace, call: Call) -> int:
    from ..agents.tasks import Tasks
    from ..present import task_json
    from .session import opened

    sub = args.task_command
    async with opened(args, call, create=sub == "start") as review:
        tasks = Tasks(review)
        rel = review.ws.rel
        rid = getattr(args, "request_id", None)
        if sub == "start":
            out = task_json.written(
                await tasks.start(args.title, args.goal, agent=args.agent, task_id=args.task_id, request_id=rid), rel
            )
            # Only the id on stdout (`T=$(stet task start ...)`); the note goes to stderr.
            text = inert(out["task"]["id"])
            if not out["created"]:
                call.say(f"stet: task {text} was already started; carrying it on")
            if args.snapshot:
                from ..agents.snapshots import Snapshots
                from ..present.proposal import snapped

                snap = snapped(await Snapshots(review).take(out["task"]["id"], None))
                out["snapshot"] = snap
                call.say(f"stet: snapshot of {snap['files']} file(s) taken")
        elif sub == "step":
            out = task_json.written(
                await tasks.step(args.task, text=args.text, status=args.status, n=args.n, request_id=rid), rel
            )
            s = out["step"]
            text = f"step {s['n']} [{s['status']}] {inert(s['text'])}"
        elif sub == "note":
            kind = "question" if args.question else args.kind or ("answer" if args.answers is not None else "decision")
            noted = await tasks.note(
                args.task, args.text, kind=kind, why=args.why, answers=args.answers, request_id=rid
            )
            out = task_json.written(noted, rel)
            n = out["note"]
            text = f"{n['kind']} {n['n']} recorded"
        elif sub == "read":
            # Paths typed in a shell are relative to where it is, not to the workspace root.
            paths = [p if p.startswith("file:") else call.path(p) for p in args.paths]
            out = task_json.written(await tasks.read(args.task, paths, request_id=rid), rel)
            text = "\n".join(f"{shown(f['path'])}  {f['hash'] or '(does not exist)'}" for f in out["files"])
        elif sub == "done":
            status = "open" if args.reopen else "abandoned" if args.abandon else "done"
            out = task_json.written(
                await tasks.finish(args.task, status=status, summary=args.summary, request_id=rid), rel
            )
            text = f"task {inert(args.task)} is {out['task']['status']}"
        else:  # list
            items = task_json.listed(await tasks.list(args.status))
            out = {"tasks": items}
            rows = [
                f"{inert(t['id'])}  {t['status']:<9}  {inert(t['title'])}"
                + (f"  ({', '.join(f'{n} {s}' for s, n in t['counts'].items())})" if t["counts"] else "")
                for t in items
            ]
            text = "\n".join(rows) if rows else "no tasks"
    if getattr(args, "json", False):
        print_json(call, out)
    else:
        call.out(text)
    return 0


async def cmd_resume(args: argparse.Namespace, call: Call) -> int:
    from ..agents.resume import render
    from ..agents.tasks import Tasks
    from ..present import task_json
    from .session import opened

    async with opened(args, call) as review:
        ctx = task_json.context(await Tasks(review).context(args.task), review.ws.rel)
    if args.json:
        print_json(call, ctx)
    elif call.stdout is not None:
        call.stdout.write(render(ctx))
    return 0
