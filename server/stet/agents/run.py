"""`stet run`: wrap any agent command - snapshot, run it, capture what it wrote.

In place, the agent writes the workspace's files; a whole snapshot taken just before is the
baseline, and the capture that follows puts it back (or keeps the agent's version). In a
worktree, the agent works in a temporary `git worktree` at HEAD plus the developer's
accepted-but-uncommitted changes: the developer's files never change while it works, and its
result is proposed into the workspace (carried onto the files as they are by then).

The command's output is untouched (it writes to the terminal directly) and its exit code is
what `stet run` exits with; Stet's own lines go to stderr.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import tempfile

from ..domain.capture import layer, layer_files
from ..domain.status import Status
from ..errors import InvalidParams
from ..faults import fault
from ..review import Review
from ..workspace import contents, git, safe
from ..workspace.paths import uri_to_path
from .capture import Capture
from .snapshots import Snapshots


def say(text: str) -> None:
    print(f"stet: {text}", file=sys.stderr, flush=True)


async def run_agent(argv: list[str], cwd: str, task_id: str | None) -> int:
    """Run the agent's command with the terminal's stdin/stdout/stderr; its exit code.

    Ctrl-C reaches the agent (it is in the terminal's foreground group with us); Stet waits
    for it to end and captures what it left."""
    env = {k: v for k, v in os.environ.items() if k != "STET_FAULT"}
    if task_id:
        env["STET_TASK"] = task_id
    try:
        proc = subprocess.Popen(argv, cwd=cwd, env=env)
    except FileNotFoundError:
        say(f"{argv[0]}: command not found")
        return 127
    except PermissionError:
        say(f"{argv[0]}: permission denied")
        return 126
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        code = await asyncio.to_thread(proc.wait)
    finally:
        signal.signal(signal.SIGINT, previous)
    return code if code >= 0 else 128 - code  # killed by a signal: as a shell reports it


class Run:
    def __init__(self, review: Review):
        self.review = review
        self.capture = Capture(review)

    async def in_place(
        self, argv: list[str], *, task_id: str | None, keep: bool, message: str | None, agent: str | None
    ) -> tuple[int, dict]:
        snapshots = Snapshots(self.review)
        left = await snapshots.current(task_id)
        if left is not None and left.whole:
            # An earlier run of this task was interrupted before its capture: what its agent
            # left is captured first, against its own baseline, so nothing is taken for baseline.
            say("capturing what an interrupted earlier run left first")
            first = await self.capture.run(task_id=task_id, keep=keep, message=message, agent=agent)
            if first.get("proposalId"):
                say(f"proposal {first['proposalId']}: {len(first['hunks'])} hunk(s) from the earlier run")
        await snapshots.take(task_id, None)
        fault("run:after-snapshot")
        code = await run_agent(argv, os.getcwd(), task_id)
        fault("run:after-agent")
        answer = await self.capture.run(task_id=task_id, keep=keep, message=message, agent=agent)
        # The run is over: what its snapshot could not be used for (nothing changed, a file
        # refused) must not be taken for an interrupted run's work by the next one.
        await snapshots.drop(task_id)
        return code, answer

    async def in_worktree(
        self, argv: list[str], *, task_id: str | None, message: str | None, agent: str | None
    ) -> tuple[int, dict, str | None]:
        """(exit code, the capture's answer, the worktree's path when it is kept)."""
        root = self.review.ws.roots[0]
        top = await asyncio.to_thread(git.toplevel, root)
        if top is None or await asyncio.to_thread(git.head, top) is None:
            raise InvalidParams(f"--worktree needs a git repository with at least one commit ({root} is not one)")
        path = os.path.join(tempfile.mkdtemp(prefix="stet-run-"), "work")
        await asyncio.to_thread(git.add_worktree, top, path, "HEAD")
        await self.review.sync()
        accepted = await asyncio.to_thread(self._carry_accepted, top, path)
        tree_id = await asyncio.to_thread(git.snapshot_tree, path)
        say(f"the agent works in {path} (a git worktree of HEAD, with the accepted changes of {accepted} file(s))")
        fault("run:after-snapshot")
        cwd = os.getcwd()
        inside = os.path.relpath(cwd, top)
        code = await run_agent(argv, path if inside.startswith("..") else os.path.join(path, inside), task_id)
        fault("run:after-agent")
        cleanup = {"worktree": path, "repo": top} if code == 0 else None
        answer = await self.capture.from_worktree_run(
            path, tree_id, task_id=task_id, message=message, agent=agent, cleanup=cleanup
        )
        kept: str | None = path
        if cleanup is not None and not answer.get("refused"):
            if answer.get("proposalId") is None:  # nothing to propose: no journal removes it
                await asyncio.to_thread(git.remove_worktree, top, path)
            kept = None
        return code, answer, kept

    def _carry_accepted(self, top: str, worktree: str) -> int:
        """Put the developer's applied hunks into the worktree's files (HEAD's version): the
        agent starts from what the developer has accepted. Returns how many were carried."""
        root = self.review.ws.roots[0]
        here = os.path.join(worktree, os.path.relpath(root, top))
        applied = [h for h in self.review.hunks.values() if h.status == Status.APPLIED]
        paths: dict[str, str] = {}
        for h in applied:
            for uri in (h.uri, h.new_uri):
                if uri:
                    rel = os.path.relpath(uri_to_path(uri), root)
                    if not rel.startswith(".."):
                        paths[uri] = os.path.join(here, rel)
        texts: dict[str, str | None] = {}
        for uri, p in paths.items():
            try:
                data = contents.read_regular(p)
                texts[uri] = None if data is None else data.decode("utf-8")
            except (contents.NotAFile, OSError, UnicodeDecodeError):
                continue
        layered = layer_files(texts, [h for h in applied if h.kind != "edit"], [])
        carried = 0
        for uri, text in layered.items():
            if text is not None:
                text = layer(text, [h for h in applied if h.kind == "edit" and h.uri == uri], [])
            if text == texts.get(uri):
                continue
            target = paths[uri]
            if text is None:
                safe.remove_file(target)
            else:
                safe.write_file(target, text.encode("utf-8"), create_folders=True)
            carried += 1
        return carried
