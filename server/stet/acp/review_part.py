"""Stet's part between an ACP editor and its agent: what it records, answers and adds.

- `initialize`: the editor's capabilities, the version the peers agree (Stet reads v1 and v2,
  shapes.py, and passes any other through untouched, said once), the agent's name (`agentInfo`,
  v2 `info`);
- `session/new` / `session/load` (v2 `session/resume`): the session's review (the store found
  from its `cwd` as `stet` finds it; none there: the session passes through untouched, said
  once), and its first prompt gets the open review;
- a tool call's `diff` (v2: a tool call's upserts merged by id) and an `fs/write_text_file`
  (v1): recorded as kept hunks of the task
  `acp-<agent>-<session>` before the message goes on (recording.py); the same change reported
  again (a snippet, the whole file, the diff with context) is one set of hunks;
- the editor refusing the permission of a recorded change: its hunks rejected (the developer
  said no); a write the editor failed, or a tool call that failed with its change not in the
  file: its hunks withdrawn (the change never happened, nobody decided it);
- a `session/request_permission` for a change that would make again one the developer
  rejected: answered with the request's reject option; the agent is told why at its next prompt;
- `session/prompt`: the decisions since the agent was last told (agents/loop.py), as one text
  block appended to the prompt.

Everything else goes on as it came, after a look at its method. A message Stet cannot make sense
of goes on untouched (said once); this part never raises into the relay.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..agents.loop import LIMIT, Loop, redoes
from ..domain import headline
from ..domain.inert import inert
from ..domain.model import Hunk
from ..domain.status import Decide, Status
from ..faults import fault
from ..review import Review
from ..review.where import STORE_DIR, STORE_FILE, located, project_root
from .message import FORWARD, JSON, Message, Reply, Rewrite, Verdict
from .part import Part
from .recording import NotRecorded, Recorded, Recorder, Resolved, record_fresh
from .shapes import Change, Shape, ToolCall, shape_of

log = logging.getLogger(__name__)

LAUNCHERS = frozenset({"npx", "node", "bunx", "bun", "uvx", "uv", "pnpm", "dlx", "yarn", "npm", "exec", "deno", "run"})
SAID = 1000  # kinds of notices logged, at most (each once)
STATUSES = 10_000  # tool calls whose last status is remembered (v2's upserts), at most


def _safe(name: str, size: int) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "-", name)[:size]


def agent_name(word: str) -> str:
    """An agent's name from a package or a program: scope, folder and @version stripped."""
    base = os.path.basename(word.strip())
    base = base.split("@", 1)[0] if not base.startswith("@") else base.lstrip("@").split("@", 1)[0]
    base = re.sub(r"\.(m?js|cjs|py|exe)$", "", base)
    return _safe(base, 64).strip("-.") or "agent"


def name_from_command(argv: list[str]) -> str:
    """The agent's name from the command that runs it: its program, or the package a launcher
    (npx, node, bunx, uvx, pnpm dlx...) runs."""
    for word in argv:
        if word.startswith("-") or os.path.basename(word) in LAUNCHERS:
            continue
        return agent_name(word)
    return "agent"


@dataclass
class _Call:
    """What a tool call changed: the hunks recorded from it, and each file's text after it."""

    hunks: set[str] = field(default_factory=set)
    changes: dict[str, tuple[str | None, str]] = field(default_factory=dict)  # rel -> (before, after)


@dataclass
class _Session:
    id: str
    review: Review | None  # None: no store where it works: it passes through
    recorder: Recorder | None
    loop: Loop | None
    fresh: bool = True  # its first prompt gets the open review
    calls: dict[str, _Call] = field(default_factory=dict)  # toolCallId -> what it changed
    made: dict[tuple[str, str], set[str]] = field(default_factory=dict)  # (rel, after) -> hunk ids
    refused: set[str] = field(default_factory=set)  # hunks whose permission the editor refused
    asked: str | None = None  # the text of the prompt the agent works on (the hunks' message)


class ReviewPart:
    """The part (stet.acp.part.Part) of one `stet acp` process: any number of sessions."""

    def __init__(self, *, agent_name: str | None, argv: list[str], env: Mapping[str, str]) -> None:
        self._named = _safe(agent_name, 64) if agent_name else None
        self._from_command = name_from_command(argv)
        self._from_info: str | None = None
        self._env = dict(env)
        self.writes_files = False  # the editor offers fs/write_text_file
        self.version: object = None  # the protocol version the peers agreed (None: not seen)
        self._sessions: dict[str, _Session] = {}
        self._reviews: dict[str, Review | None] = {}  # by store
        self._lock = asyncio.Lock()  # one store step at a time, both directions
        self._said: set[str] = set()
        self._statuses: dict[tuple[str, str], str | None] = {}  # (session, tool call) -> its status

    @property
    def agent(self) -> str:
        return self._named or self._from_info or self._from_command

    # --- the relay's calls ---------------------------------------------------------------
    async def from_editor(self, msg: Message, asked: Message | None) -> Verdict:
        shape = self._shape
        if shape is None:
            return self._passes()
        method = msg.method
        if method is None:
            if asked is None or asked.method not in shape.asked_of_editor or not msg.is_response:
                return FORWARD
            return await self._guarded(self._answered, msg, asked)
        if method not in shape.from_editor:
            return FORWARD
        return await self._guarded(self._editor_asks, msg, None)

    async def from_agent(self, msg: Message, asked: Message | None) -> Verdict:
        shape = self._shape
        if shape is None:
            return self._passes()
        method = msg.method
        if method is None:
            if asked is None or asked.method not in shape.asked_of_agent or not msg.is_response:
                return FORWARD
            return await self._guarded(self._agent_answered, msg, asked)
        if method == "session/update":
            update = msg.params.get("update")
            if not isinstance(update, dict):
                return FORWARD
            if shape.upserts:
                self._note_status(msg.params, shape.status(update))
            if not shape.looks(update):
                return FORWARD
        elif method not in shape.asked_of_editor:
            return FORWARD
        return await self._guarded(self._agent_says, msg, None)

    async def close(self) -> None:
        reviews = [r for r in self._reviews.values() if r is not None]
        self._reviews.clear()
        for review in reviews:
            try:
                await review.close()
            except Exception as exc:  # closing: said, nothing more to do
                self._say("close", f"closing the review failed: {exc}")

    # --- guarding ------------------------------------------------------------------------
    async def _guarded(self, step: Any, msg: Message, asked: Message | None) -> Verdict:
        if self._shape is None:
            return self._passes()
        try:
            async with self._lock:
                verdict: Verdict = await step(msg, asked)
                return verdict
        except Exception as exc:  # never into the relay: the message goes on as it came
            self._say(f"fail:{msg.method or (asked.method if asked else '')}", f"{type(exc).__name__}: {exc}")
            return FORWARD

    @property
    def _shape(self) -> Shape | None:
        """How the messages of the version the peers agreed read (v1 until they agree one);
        None: a version Stet does not read."""
        return shape_of(self.version)

    def _passes(self) -> Verdict:
        self._say("version", f"protocol version {self.version!r}: Stet passes this connection through untouched")
        return FORWARD

    def _note_status(self, params: JSON, said: tuple[str, str | None] | None) -> None:
        """A tool call's status as its upserts patch it (no store step: at once, in order)."""
        sid = params.get("sessionId")
        if said is None or not isinstance(sid, str) or sid not in self._sessions:
            return
        key = (sid, said[0])
        self._statuses.pop(key, None)
        self._statuses[key] = said[1]
        if len(self._statuses) > STATUSES:
            del self._statuses[next(iter(self._statuses))]

    def _say(self, kind: str, text: str) -> None:
        """Log once per kind (agent-written text made inert); past SAID kinds, nothing more."""
        if kind in self._said or len(self._said) >= SAID:
            return
        self._said.add(kind)
        log.warning("stet acp: %s", inert(text[:1000]))

    # --- initialize and sessions ---------------------------------------------------------
    async def _editor_asks(self, msg: Message, _asked: Message | None) -> Verdict:
        method, params = msg.method, msg.params
        if method == "initialize":
            caps = params.get("clientCapabilities")
            fs = caps.get("fs") if isinstance(caps, dict) else None
            self.writes_files = isinstance(fs, dict) and fs.get("writeTextFile") is True
            return FORWARD
        if method == "session/load":
            return FORWARD  # opened with its answer (a session that loaded)
        if method == "session/resume":  # v2: what the agent replays before its answer is history
            sid = params.get("sessionId")
            if isinstance(sid, str):
                self._sessions.pop(sid, None)
            return FORWARD
        return await self._prompt(msg)

    async def _agent_answered(self, msg: Message, asked: Message) -> Verdict:
        body = msg.body or {}
        result = body.get("result")
        if "error" in body:
            return FORWARD  # nothing agreed, no session opened
        if asked.method == "initialize":
            if isinstance(result, dict):
                self.version = result.get("protocolVersion")
                shape = self._shape
                name = shape.agent_name(result) if shape is not None else None
                if name is not None:
                    self._from_info = agent_name(name)
            return FORWARD
        opened = Shape.opened(asked.method, asked.params, result)
        if opened is not None:
            await self._open_session(*opened)
        return FORWARD

    async def _open_session(self, sid: str, cwd: str) -> _Session:
        review = await self._review_for(cwd)
        agent = self.agent
        task = f"acp-{agent}-{_safe(sid, 200)}"
        recorder = loop = None
        if review is not None:
            recorder = Recorder(review, agent, task, f"{agent} (ACP) session {sid[:8]}")
            loop = Loop(review, agent, task_prefix=f"acp-{agent}-")
        session = _Session(sid, review, recorder, loop)
        self._sessions[sid] = session
        return session

    async def _review_for(self, cwd: str) -> Review | None:
        from ..review import open_review

        if not os.path.isabs(cwd) or not os.path.isdir(cwd):
            self._say(f"cwd:{cwd}", f"the session's folder {cwd} is not a folder here: its messages pass through")
            return None
        found = located(cwd, self._env.get("STET_DB"))
        if found is None:
            # As `stet propose` and `stet capture` do: the store is made where the CLI would make
            # it (the enclosing git work tree, else the folder) - one line in the editor's settings
            # is all a user writes. Never in / or the home folder itself (no project open).
            root = os.path.realpath(project_root(cwd))
            if root in (os.path.realpath("/"), os.path.realpath(self._env.get("HOME") or os.path.expanduser("~"))):
                self._say(
                    f"nostore:{cwd}",
                    f"no Stet store in {cwd} or above, and {root} is no project's folder: this session's changes "
                    "are not recorded (open a project folder, or run `stet status` in one once)",
                )
                return None
            found = (os.path.join(root, STORE_DIR, STORE_FILE), [root])
        db, roots = found
        if db not in self._reviews:
            try:
                self._reviews[db] = (await open_review(roots, db, create=True, quarantine=False)).review
            except Exception as exc:
                self._say(f"open:{db}", f"cannot open the review at {db}: {exc}; this session passes through")
                self._reviews[db] = None
        return self._reviews[db]

    def _session(self, params: JSON) -> _Session | None:
        sid = params.get("sessionId")
        s = self._sessions.get(sid) if isinstance(sid, str) else None
        return s if s is not None and s.review is not None else None

    # --- the prompt ----------------------------------------------------------------------
    async def _prompt(self, msg: Message) -> Verdict:
        s = self._session(msg.params)
        prompt = msg.params.get("prompt")
        if s is None or s.loop is None or s.review is None or not isinstance(prompt, list):
            return FORWARD
        s.asked = _asked(prompt)
        await s.review.sync()
        if s.fresh:
            text, _ = await s.loop.session_context()
            s.fresh = False
        else:
            text, _ = await s.loop.news()
        if not text:
            return FORWARD
        fault("acp:after-tell")  # told (durably), the prompt that tells it not passed on yet
        body = dict(msg.body or {})
        body["params"] = {**msg.params, "prompt": [*prompt, {"type": "text", "text": text[:LIMIT]}]}
        return Rewrite(body)

    # --- changes -------------------------------------------------------------------------
    async def _agent_says(self, msg: Message, _asked: Message | None) -> Verdict:
        params = msg.params
        s = self._session(params)
        if s is None:
            return FORWARD
        shape = self._shape
        assert shape is not None
        if msg.method == "session/update":
            update = params.get("update")
            assert isinstance(update, dict)
            call = shape.tool_call(update)
            if call is not None:
                await self._tool_update(s, call, shape)
            return FORWARD
        if msg.method == "fs/write_text_file":
            await self._write(s, msg)
            return FORWARD
        return await self._permission(s, msg)

    async def _tool_update(self, s: _Session, tool: ToolCall, shape: Shape) -> None:
        await self._changes(s, tool, shape)
        if tool.status in shape.ended:
            await self._failed(s, tool.tcid)

    async def _changes(self, s: _Session, tool: ToolCall, shape: Shape) -> None:
        """The changes a tool call shows, recorded; `made` when it is reported completed (v2:
        its status as its upserts left it)."""
        status = tool.status
        if status is None and shape.upserts:
            status = self._statuses.get((s.id, tool.tcid))
        for kind, why in tool.unread:
            self._say(kind, why)
        for change in tool.changes:
            await self._diff(s, tool.tcid, change, made=status == "completed")

    async def _diff(self, s: _Session, tcid: str, change: Change, *, made: bool) -> None:
        assert s.recorder is not None
        path = change.path
        call = s.calls.setdefault(tcid, _Call())
        try:
            rel = s.recorder.rel(path)
            if rel in call.changes:
                return  # this tool call's change to this file is recorded already
            done = await record_fresh(s.recorder, rel, lambda now: change.place(now, made), self._message(s))
        except NotRecorded as exc:
            self._say(f"diff:{path}:{exc}", f"{path}: not recorded from the tool call: {exc}")
            return
        self._keep(s, done, call)

    async def _write(self, s: _Session, msg: Message) -> None:
        assert s.recorder is not None
        path, text = msg.params.get("path"), msg.params.get("content")
        if not isinstance(path, str) or not isinstance(text, str):
            self._say("write-shape", "an fs/write_text_file without a path or a content: not recorded")
            return
        try:
            rel = s.recorder.rel(path)
            done = await record_fresh(s.recorder, rel, lambda now: Resolved(now, text, now), self._message(s))
        except NotRecorded as exc:
            self._say(f"write:{path}:{exc}", f"{path}: the write is not recorded: {exc}")
            return
        self._keep(s, done, None)

    def _message(self, s: _Session) -> str:
        """The hunks' message, as the hooks write it: `agent: what the developer asked`."""
        return headline.line(self.agent, s.asked)

    @staticmethod
    def _keep(s: _Session, done: Recorded, call: _Call | None) -> None:
        """What a recorded change made, remembered by its file's text after it (the same change
        reported again maps to the same hunks) and by its tool call."""
        key = (done.rel, done.after)
        ids = s.made.setdefault(key, set())
        ids.update(h.id for h in done.hunks)
        if call is not None:
            call.changes[done.rel] = (None, done.after)
            call.hunks.update(ids)

    def _hunks_of_write(self, s: _Session, params: JSON) -> set[str]:
        path, text = params.get("path"), params.get("content")
        if not isinstance(path, str) or not isinstance(text, str) or s.recorder is None:
            return set()
        try:
            rel = s.recorder.rel(path)
        except NotRecorded:
            return set()
        ids = set(s.made.get((rel, text), ()))
        for call in s.calls.values():  # the tool calls whose change this write made
            if call.changes.get(rel, (None, None))[1] == text:
                ids |= call.hunks
        return ids

    # --- what the editor answered --------------------------------------------------------
    async def _answered(self, msg: Message, asked: Message) -> Verdict:
        s = self._session(asked.params)
        if s is None or s.review is None:
            return FORWARD
        body = msg.body or {}
        if asked.method == "fs/write_text_file":
            if "error" in body:
                ids = self._hunks_of_write(s, asked.params)
                if ids:
                    await s.review.withdraw(sorted(ids), "the editor did not write the file")
            return FORWARD
        shape = self._shape
        assert shape is not None
        if _refused(body.get("result"), asked.params.get("options")):
            tcid = shape.permission_id(asked.params)
            call = s.calls.get(tcid) if tcid else None
            if call is not None and call.hunks:
                await self._reject(s, sorted(call.hunks), None, told=True)
                s.refused |= call.hunks
        return FORWARD

    async def _failed(self, s: _Session, tcid: str) -> None:
        call = s.calls.get(tcid)
        if call is None or not call.hunks or s.recorder is None or s.review is None:
            return
        await s.review.sync()
        gone = []
        for hid in sorted(call.hunks):
            h = s.review.hunks.get(hid)
            if h is None or not h.kept or h.status not in (Status.PENDING, Status.STALE):
                continue
            rel = s.review.ws.rel(h.uri)
            try:
                now = await s.recorder.now(rel)
            except NotRecorded:
                continue
            if now is None or _shown(h) not in now:
                gone.append(hid)
        if gone:
            await s.review.withdraw(gone, "the tool call failed and its change is not in the file")

    async def _reject(self, s: _Session, ids: list[str], feedback: str | None, *, told: bool) -> None:
        """Hunks rejected on the developer's behalf; `told`: the agent knows already (the editor
        told it the permission was refused): not told again at the next prompt."""
        assert s.review is not None and s.loop is not None
        await s.review.sync()
        pending = [
            i for i in ids if (h := s.review.hunks.get(i)) is not None and h.status in (Status.PENDING, Status.STALE)
        ]
        if not pending:
            return
        decided = await s.review.decide(Decide.REJECT, pending, feedback=feedback)
        if told:
            async with s.loop.told.telling(s.loop.agent) as telling:
                await telling.record([(h.id, h.decision) for h in decided.hunks if h.decision is not None])

    # --- a redo of a rejected change -----------------------------------------------------
    async def _permission(self, s: _Session, msg: Message) -> Verdict:
        assert s.review is not None and s.loop is not None and s.recorder is not None
        params = msg.params
        shape = self._shape
        assert shape is not None
        tool = shape.permission(params)
        tcid = tool.tcid if tool is not None else None
        # A diff shown only here (Gemini CLI's first sight of a change) is recorded before the
        # editor sees it, as a tool call's is: the agent writes the file once allowed.
        if tool is not None:
            await self._changes(s, tool, shape)
        option = _reject_option(params.get("options"))
        if option is None or "id" not in (msg.body or {}):
            return FORWARD
        call = s.calls.get(tcid) if tcid else None
        if call is None:
            return FORWARD
        await s.review.sync()
        if not s.review.list(statuses=(Status.REJECTED,)):
            return FORWARD  # nothing was ever rejected: nothing to redo
        for rel, (_, after) in call.changes.items():
            hunk = await self._redone(s, rel, after)
            if hunk is None:
                continue
            feedback = hunk.feedback or None
            live = (s.review.hunks.get(i) for i in call.hunks)
            own = sorted(h.id for h in live if h is not None and h.status in (Status.PENDING, Status.STALE))
            if own:
                await self._reject(s, own, feedback, told=False)
            else:  # the very change rejected before: told again at the next prompt
                async with s.loop.told.telling(s.loop.agent) as telling:
                    await telling.record([(hunk.id, None)])
            self._say(f"redo:{rel}", f"a change to {rel} the developer rejected was refused on their behalf")
            answer = {"outcome": {"outcome": "selected", "optionId": option}}
            return Reply({"jsonrpc": "2.0", "id": (msg.body or {}).get("id"), "result": answer})
        return FORWARD

    async def _redone(self, s: _Session, rel: str, after: str) -> Hunk | None:
        """The rejected hunk the change would make again. A change whose permission the editor
        refused in this session is not one: the developer is asked again, as without Stet."""
        assert s.recorder is not None and s.loop is not None and s.review is not None
        try:
            now = await s.recorder.now(rel)
        except NotRecorded:
            return None
        before, uri = now or "", s.recorder.uri(rel)
        hunk = s.loop.rejected_redo(rel, uri, before, after)
        if hunk is None or hunk.id not in s.refused:
            return hunk
        rejected = s.review.list(uri=uri, statuses=(Status.REJECTED,))
        return next((h for h in rejected if h.id not in s.refused and redoes(h, before, after)), None)


def _asked(prompt: list[Any]) -> str | None:
    """The developer's words in a prompt: its text blocks (bounded: only a line is kept)."""
    texts = [b["text"][:2000] for b in prompt[:20] if isinstance(b, dict) and isinstance(b.get("text"), str)]
    return " ".join(texts) or None


def _shown(h: Hunk) -> str:
    return (
        "".join(c for c in h.ctx_before if c is not None)
        + h.new_text
        + "".join(c for c in h.ctx_after if c is not None)
    )


def _reject_option(options: object) -> str | None:
    """The request's reject option: reject_once, else reject_always, else any reject kind."""
    found: dict[str, str] = {}
    for o in options if isinstance(options, list) else ():
        if isinstance(o, dict) and isinstance(o.get("kind"), str) and isinstance(o.get("optionId"), str):
            found.setdefault(o["kind"], o["optionId"])
    for kind in ("reject_once", "reject_always"):
        if kind in found:
            return found[kind]
    return next((oid for kind, oid in found.items() if kind.startswith("reject")), None)


def _refused(result: object, options: object) -> bool:
    """Whether the editor's answer to a permission refuses it (a reject option, or cancelled)."""
    outcome = result.get("outcome") if isinstance(result, dict) else None
    if not isinstance(outcome, dict):
        return False
    if outcome.get("outcome") == "cancelled":
        return True
    chosen = outcome.get("optionId")
    for o in options if isinstance(options, list) else ():
        if isinstance(o, dict) and o.get("optionId") == chosen:
            kind = o.get("kind")
            return isinstance(kind, str) and kind.startswith("reject")
    return False


def _a_part(part: ReviewPart) -> Part:
    return part  # mypy checks that ReviewPart is the relay's Part
