"""`stet run`: wrap any agent command - snapshot, run it, capture what it wrote.

In place, the agent writes the workspace's files; a whole snapshot taken just before is the
baseline, and the capture that follows puts it back (or keeps the agent's version). In a
worktree, the agent works in a temporary `git worktree` at HEAD plus the developer's
accepted-but-uncommitted changes: the developer's files never change while it works, and its
result is proposed into the workspace (carried onto the files as they are by then).

The command's output is untouched (it writes to the terminal directly) and its exit code is
what `stet run` exits with; Stet's own lines go to stderr.

A run in place is `Run.begin` (the baseline), the agent, `Run.finish` (the capture): in this
process (`in_place`), or the halves done by the workspace's resident while the thin client runs
the agent itself (resident/run.py); the baseline is in the store, so either half may be done
by any process.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator

from ..domain.inert import inert
from ..domain.status import Status
from ..errors import InvalidParams
from ..faults import fault
from ..review import Review
from ..workspace import contents, git, safe, worktrees
from ..workspace.paths import uri_to_path
from .snapshots import Snapshots

TYPE_CHECKING = False  # types for mypy only
if TYPE_CHECKING:
    from typing import TextIO

    from ..domain.proposed import Captured
    from .capture import Capture


def say(text: str, stream: TextIO | None = None) -> None:
    """One line on stderr (`stream`: a call's); what an agent wrote in it (a proposal id,
    feedback) made inert."""
    print(f"stet: {inert(text)}", file=stream or sys.stderr, flush=True)


class Agent:
    """The agent's process while it runs. SIGTERM and SIGHUP sent to `stet run` are passed on
    to it (Stet then captures what it left); Ctrl-C reaches it from the terminal (it is in
    the terminal's foreground group with us), so Stet only waits for it to end."""

    FORWARDED = (signal.SIGTERM, signal.SIGHUP)

    def __init__(self) -> None:
        self.proc: subprocess.Popen[bytes] | None = None
        self.stopped: int | None = None  # the signal that asked the run to stop

    def _forward(self, sig: int, _frame: object = None) -> None:
        self.stopped = self.stopped or sig
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(sig)

    @contextlib.contextmanager
    def signals(self) -> Iterator[None]:
        """For the whole run: a SIGTERM before the agent starts means it does not start; one
        after it ended lets Stet finish its capture (a step that never waits on anyone).
        Plain handlers, not the event loop's: they run at once, even while Stet is busy."""
        previous = {sig: signal.signal(sig, self._forward) for sig in self.FORWARDED}
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    async def run(
        self, argv: list[str], cwd: str, task_id: str | None, meanwhile: Callable[[], object] | None = None
    ) -> tuple[int, bool]:
        """Run the command with the terminal's stdin/stdout/stderr in `cwd`: (its exit code,
        whether it started at all). `meanwhile` runs once the agent has started (what Stet
        needs only after it: prepared while it works, not before it starts)."""
        env = {k: v for k, v in os.environ.items() if k != "STET_FAULT"}
        env["PWD"] = cwd  # shells and tools that trust PWD see where they are
        if task_id:
            env["STET_TASK"] = task_id
        if self.stopped is not None:
            say("stopped before the agent started")
            return 128 + self.stopped, False
        # Ctrl-C is the agent's from the moment it exists: Stet lets it pass before starting it
        # (a Ctrl-C as it starts once stopped Stet with nothing captured). A handler, not
        # SIG_IGN: exec gives the agent the default back; one ignored already (a background
        # job) stays ignored for the agent too.
        previous = signal.getsignal(signal.SIGINT)
        ours = previous not in (signal.SIG_IGN, None)
        if ours:
            signal.signal(signal.SIGINT, _agents_ctrl_c)
        try:
            try:
                self.proc = subprocess.Popen(argv, cwd=cwd, env=env)
            except FileNotFoundError:
                say(f"{argv[0]}: command not found")
                return 127, False
            except PermissionError:
                say(f"{argv[0]}: permission denied")
                return 126, False
            if self.stopped is not None:  # came while it was being started
                self.proc.send_signal(self.stopped)
            if meanwhile is not None:
                meanwhile()
            code = await asyncio.to_thread(self.proc.wait)
        finally:
            if ours and previous is not None:
                signal.signal(signal.SIGINT, previous)
        return (code if code >= 0 else 128 - code), True  # killed by a signal: as a shell reports it


def _agents_ctrl_c(_sig: int, _frame: object = None) -> None:
    """Ctrl-C while the agent runs: the terminal sent it to the agent too; Stet waits for it."""


def agent_argv(argv: list[str], here: str, there: str, top: str, worktree: str) -> tuple[list[str], list[str]]:
    """The agent's command line for a run in `there` (its worktree's folder for `here`, where
    the user typed it), so that each relative path means what it meant in `here`. A path is
    an argument with a `/` (or the value of `--option=VALUE` with one) that names an existing
    file or folder from `here`: the worktree's copy when it has one at the same place (the
    agent works on its own copies), else the absolute path (outside the repository, or not in
    git). Words without a `/` are passed as written (a message, a command looked up in PATH);
    one that names a file the worktree lacks gets a note. Returns (argv, notes for the user)."""
    notes: list[str] = []

    def missing(value: str) -> str | None:
        """The absolute path `value` names from `here` when the agent would not find it."""
        if not value or value.startswith("-") or os.path.isabs(value):
            return None
        mine = os.path.normpath(os.path.join(here, value))
        if not os.path.lexists(mine):
            return None
        rel = os.path.relpath(mine, top)
        if rel != ".." and not rel.startswith(".." + os.sep):
            theirs = os.path.normpath(os.path.join(worktree, rel))
            if os.path.normpath(os.path.join(there, value)) == theirs and os.path.lexists(theirs):
                return None  # the agent's own copy, at the same place
        return mine

    def passed(value: str) -> str | None:
        mine = missing(value)
        if mine is None:
            return None
        if "/" in value:
            notes.append(f"{value} is not in the agent's worktree: passed as {mine}")
            return mine
        notes.append(f"{value} is not in the agent's worktree (not in git); to pass yours, write ./{value}")
        return None

    out = []
    for n, arg in enumerate(argv):
        if n == 0 and "/" not in arg:
            out.append(arg)  # a command looked up in PATH
        elif arg.startswith("--") and "=" in arg:
            option, _, value = arg.partition("=")
            new = passed(value)
            out.append(arg if new is None else f"{option}={new}")
        else:
            out.append(passed(arg) or arg)
    return out, notes


class Run:
    """A run for a call: `cwd` is where its agent starts (the caller's folder), `stderr` where
    Stet's lines go (None: this process's)."""

    def __init__(self, review: Review, cwd: str, stderr: TextIO | None = None):
        self.review, self.cwd, self.stderr = review, cwd, stderr
        self._capture: Capture | None = None
        self.agent = Agent()

    @property
    def capture(self) -> Capture:
        """Made when first needed: its modules are imported while the agent works, not before
        it starts (`stet run`'s time before the agent is Stet's overhead)."""
        if self._capture is None:
            from .capture import Capture

            self._capture = Capture(self.review)
        return self._capture

    async def in_place(
        self, argv: list[str], *, task_id: str | None, keep: bool, message: str | None, agent: str | None
    ) -> tuple[int, Captured]:
        with self.agent.signals():
            await self.begin(task_id, keep=keep, message=message, agent=agent)
            code, _ = await self.agent.run(argv, self.cwd, task_id, meanwhile=lambda: self.capture)
            answer = await self.finish(task_id, keep=keep, message=message, agent=agent)
        return code, answer

    async def begin(self, task_id: str | None, *, keep: bool, message: str | None, agent: str | None) -> None:
        """Before the agent of an in-place run starts: its baseline, the whole workspace, kept
        in the store. The agent may run in another process (the thin client runs it when the
        resident did this): `finish`, in whichever process, finds the baseline there."""
        snapshots = Snapshots(self.review)
        left = await snapshots.current(task_id)
        if left is not None and left.whole:
            # An earlier run of this task was interrupted before its capture: what its agent
            # left is captured first, against its own baseline, so nothing is taken for baseline.
            say("capturing what an interrupted earlier run left first", self.stderr)
            first = await self.capture.run(task_id=task_id, keep=keep, message=message, agent=agent)
            if first.proposal_id:
                say(f"proposal {first.proposal_id}: {len(first.hunks)} hunk(s) from the earlier run", self.stderr)
        await snapshots.take(task_id, None)
        fault("run:after-snapshot")

    async def finish(self, task_id: str | None, *, keep: bool, message: str | None, agent: str | None) -> Captured:
        """After the agent of an in-place run ended: what it wrote, captured against the
        baseline `begin` kept; the capture's answer."""
        fault("run:after-agent")
        answer = await self.capture.run(task_id=task_id, keep=keep, message=message, agent=agent)
        # The run is over: what its snapshot could not be used for (nothing changed, a file
        # refused) must not be taken for an interrupted run's work by the next one.
        await Snapshots(self.review).drop(task_id)
        return answer

    async def in_worktree(
        self, argv: list[str], *, task_id: str | None, message: str | None, agent: str | None
    ) -> tuple[int, Captured, str | None]:
        """(exit code, the capture's answer, the worktree's path when it is kept for the user).

        The worktree is the temporary folder itself, so `git worktree remove --force PATH`
        leaves nothing behind. It is removed on every way out - by the capture's journal once
        the proposal is stored, else here - except when it is kept on purpose: the agent failed
        or was stopped, or its work could not all be proposed."""
        root = self.review.ws.roots[0]
        top = await asyncio.to_thread(git.toplevel, root)
        if top is None or await asyncio.to_thread(git.head, top) is None:
            raise InvalidParams(f"--worktree needs a git repository with at least one commit ({root} is not one)")
        with self.agent.signals():
            path = os.path.realpath(tempfile.mkdtemp(prefix="stet-run-"))
            try:
                made = await asyncio.to_thread(worktrees.make, top, path, "HEAD")
            except BaseException:
                await asyncio.to_thread(git.remove_worktree, top, path)
                await asyncio.to_thread(shutil.rmtree, path, True)
                raise
            try:
                code, answer, there = await self._in_worktree(argv, top, made, task_id, message, agent)
            except BaseException:
                if self.agent.proc is not None:  # the agent's work is there
                    say(f"the worktree is kept at {path} (Stet stopped before its capture was done)", self.stderr)
                    say(f"remove it with `git worktree remove --force {shlex.quote(path)}`", self.stderr)
                else:
                    await asyncio.to_thread(git.remove_worktree, top, path)
                raise
            kept: str | None = path if there else None
            if there and code == 0 and not answer.refused:
                # Removed by the capture's journal when it stored a proposal; here otherwise
                # (nothing to propose, or the journal could not).
                await asyncio.to_thread(git.remove_worktree, top, path)
                kept = None
        return code, answer, kept

    async def _in_worktree(
        self,
        argv: list[str],
        top: str,
        made: worktrees.Made,
        task_id: str | None,
        message: str | None,
        agent: str | None,
    ) -> tuple[int, Captured, bool]:
        """(exit code, the capture's answer, whether the worktree is still there for the
        caller to keep or remove: it is removed here when the agent never started, and when
        it was tampered with)."""
        path = made.path
        await self.review.sync()
        accepted = await asyncio.to_thread(self._carry_accepted, top, path)
        tree_id = await asyncio.to_thread(git.snapshot_tree, path, made.gitdir)
        say(
            f"the agent works in {path} (a git worktree of HEAD, with the accepted changes of {accepted} file(s))",
            self.stderr,
        )
        fault("run:after-snapshot")
        here = self.cwd
        inside = os.path.relpath(here, top)
        there = (
            path if inside == ".." or inside.startswith(".." + os.sep) else os.path.normpath(os.path.join(path, inside))
        )
        argv, notes = agent_argv(argv, here, there, top, path)
        for note in notes:
            say(note, self.stderr)
        code, ran = await self.agent.run(argv, there, task_id, meanwhile=lambda: self.capture)
        from ..domain.capture import Refused
        from .capture import nothing

        if not ran:
            await asyncio.to_thread(git.remove_worktree, top, path)
            return code, nothing("worktree", keep=False), False
        fault("run:after-agent")
        tampered = await asyncio.to_thread(worktrees.check, made)
        if tampered is not None:
            # Not one git call in it: its .git may name a git folder of the agent's.
            await asyncio.to_thread(worktrees.discard, top, made)
            why = f"{tampered}; nothing was captured from it, and it was removed without running git in it"
            return code, nothing("worktree", [Refused(path, why)], keep=False), False
        cleanup = {"worktree": path, "repo": top} if code == 0 else None
        answer = await self.capture.from_worktree_run(
            path, tree_id, made.gitdir, task_id=task_id, message=message, agent=agent, cleanup=cleanup
        )
        return code, answer, True

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
                data = contents.read_regular(p, self.review.state.limits.max_bytes)
                texts[uri] = None if data is None else data.decode("utf-8")
            except (contents.NotAFile, OSError, UnicodeDecodeError):
                continue
        from ..domain.capture import layer, layer_files

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
