"""`stet acp -- AGENT [ARGS]`: what an editor runs instead of an ACP agent. Stet starts the agent
and relays the protocol on stdio both ways, untouched but for its part (acp/relay.py); stdout
carries nothing but the protocol."""

from __future__ import annotations

import argparse

TYPE_CHECKING = False  # types for mypy only
if TYPE_CHECKING:
    from typing import BinaryIO

    from ..acp.part import Part
    from .call import Call
    from .parser import Parents, Sub


def add_acp(sub: Sub, o: Parents, name: str) -> None:
    p = sub.add_parser(
        name,
        help="run an ACP agent for an editor, recording every change it proposes: stet acp -- AGENT ARGS...",
        description="What an editor (Zed, JetBrains, CodeCompanion, agent-shell) runs instead of an ACP agent: "
        "Stet starts the agent and passes every message between them through unchanged, except where it takes "
        "part: each change the agent proposes is recorded for review at once, a permission to redo a change the "
        "developer rejected is refused for them, and the developer's decisions are told to the agent at its next "
        "prompt. Exits with the agent's exit code (127 when it cannot be started).",
    )
    p.add_argument(
        "--agent-name",
        metavar="NAME",
        help="the agent's name in the review (default: the name it gives in initialize, else its command's)",
    )
    p.add_argument("--no-review", action="store_true", help="relay only: record nothing, add nothing")
    p.add_argument(
        "--proxy",
        action="store_true",
        help="run as a proxy component under ACP's conductor (no AGENT: stdin and stdout are the conductor's)",
    )
    p.add_argument("argv", nargs=argparse.REMAINDER, metavar="-- AGENT ARGS", help="the agent's command")


async def cmd_acp(args: argparse.Namespace, call: Call) -> int:
    argv = args.argv[1:] if args.argv[:1] == ["--"] else args.argv
    if args.proxy and argv:
        call.say("stet acp: --proxy takes no agent: the conductor starts it (stet acp --proxy)")
        return 2
    if not argv and not args.proxy:
        call.say("stet acp: name the agent's command: stet acp -- AGENT [ARGS...]")
        return 2
    stdout: BinaryIO | None = getattr(call.stdout, "buffer", None)  # the process's own: the protocol is bytes
    if call.stdin is None or stdout is None:
        call.say("stet acp: the editor's stdin and stdout are needed")
        return 2
    from ..acp import relay

    part = relay.PassThrough() if args.no_review else _review_part(args, argv, call)
    stdout.flush()
    if args.proxy:
        from ..acp import conductor

        return await conductor.run(part, stdin=call.stdin, stdout=stdout, stderr=call.stderr)
    # A crash test's fault point is Stet's own, never the agent's (as `stet run` does).
    env = {k: v for k, v in call.env.items() if k != "STET_FAULT"}
    return await relay.run(argv, part, stdin=call.stdin, stdout=stdout, cwd=call.cwd, env=env, stderr=call.stderr)


def _review_part(args: argparse.Namespace, argv: list[str], call: Call) -> Part:
    from ..acp.review_part import ReviewPart  # (loads the review: only when it is wanted)

    return ReviewPart(agent_name=args.agent_name, argv=argv, env=call.env)
