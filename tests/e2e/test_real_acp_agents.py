"""The real ACP agents (Claude Code's adapter, Gemini CLI's ACP mode, Codex's adapter: the pinned npm
releases, support/agents_install.py), driven by a scripted editor (support/acp_client.py) and the
scripted model (support/scripted_model.py).

Without Stet: what each sends an editor for a one-file edit the editor refuses, then the same edit
allowed, as recorded in tests/fixtures/acp/AGENT.jsonl (STET_RECORD_ACP=1 rewrites them): the
shapes Stet's ACP part reads.

Through `stet acp -- AGENT` (this tree's Stet): the edit recorded as one pending kept hunk of task
acp-AGENT-SESSION before the editor is shown it; the developer's rejection told at the next prompt,
the redo of the rejected change refused on their behalf (the editor never asked), the refusal
reaching the model and the reason told at the prompt after; SIGKILL of Stet, of the agent or of
both mid-prompt losing and doubling nothing, the agent ending with Stet, a new session working after."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest

from support.acp_agents import AGENTS, AcpAgent
from support.acp_client import AcpClient, AcpError, Entry, descendants
from support.capturetools import agent_repo, duplicates, hunks
from support.clitools import stet
from support.real_agents import PYTHON
from support.scripted_model import Request, ScriptedModel, text

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "acp"
OLD, NEW = "LIMIT = 10", "LIMIT = 20"
# Updates an agent sends when it likes (its commands, usage, its title): left out of the shape.
AMBIENT = {"available_commands_update", "usage_update", "session_info_update", "current_mode_update"}


def shape(transcript: list[Entry]) -> list[tuple]:
    """Each message as (direction, what it is, its fields): a request or notification by its method
    (a session/update by its kind), a response by the method it answers; ambient updates left out."""
    asked: dict[tuple[str, object], str] = {}
    out: list[tuple] = []
    for e in transcript:
        body = e.body if isinstance(e.body, dict) else {}
        if e.method is not None:
            if "id" in body:
                asked[(e.direction, body["id"])] = e.method
            kind = e.update.get("sessionUpdate")
            if kind in AMBIENT:
                continue
            fields = sorted(e.update) if kind else sorted(e.params)
            out.append((e.direction, f"{e.method}:{kind}" if kind else e.method, fields))
        else:
            method = asked.get(("out" if e.direction == "in" else "in", body.get("id")), "?")
            result = body.get("result")
            fields = sorted(result) if isinstance(result, dict) else [type(result).__name__]
            out.append((e.direction, f"{method} ->", ["error"] if "error" in body else fields))
    return out


def recorded(client: AcpClient, name: str, replace: dict[str, str]) -> list[dict]:
    """The transcript as the fixture `name` holds it (rewritten first when STET_RECORD_ACP=1); a new
    agent release that changes the shapes is noticed here."""
    fixture = FIXTURES / f"{name}.jsonl"
    if os.environ.get("STET_RECORD_ACP") == "1":
        client.dump(fixture, replace)
    return [json.loads(line) for line in fixture.read_text().splitlines()]


def one_refused_then_allowed(agent: AcpAgent, tmp_path: Path) -> tuple[AcpClient, dict[str, str], ScriptedModel]:
    """One session of the real agent without Stet: the edit refused by the editor, then made again and
    allowed. Returns the client (its transcript), the placeholders of the run's folders and ids, and
    the model (its log)."""
    cmd = agent.command()
    repo = agent_repo(tmp_path / "repo")
    home = tmp_path / "home"
    a = repo / "a.py"
    with ScriptedModel() as model:
        client = AcpClient(
            cmd,
            repo,
            agent.env(home, model.url, repo),
            permissions=["reject_once", "allow_once"],
            watch=[a],
            stderr=tmp_path / "agent.stderr",
        )
        with client:
            assert client.initialize()["protocolVersion"] == 1
            session = client.new_session()
            model.play([agent.edit(repo, a, OLD, NEW), text("refused")])
            client.prompt(session, "raise the limit to 20")
            assert a.read_text().startswith(f"{OLD}\n")
            model.play([agent.edit(repo, a, OLD, NEW), text("raised")])
            assert client.prompt(session, "raise it, please")["stopReason"] == "end_turn"
            assert a.read_text().startswith(f"{NEW}\n")
        assert client.errors == []
    return client, {str(repo): "$CWD", str(home): "$HOME", session: "$SESSION"}, model


def diffs(entry: Entry) -> list[dict]:
    """The diff contents of a tool call in a session/update or a permission request."""
    call = entry.update or entry.params.get("toolCall") or {}
    content = call.get("content") if isinstance(call, dict) else None
    return [c for c in content or [] if isinstance(c, dict) and c.get("type") == "diff"]


@pytest.mark.parametrize("name", sorted(AGENTS))
def test_real_acp_agent_sends_what_was_recorded(tmp_path, name):
    client, replace, model = one_refused_then_allowed(AGENTS[name], tmp_path)
    fixture = recorded(client, name, replace)
    seen = [json.loads(line) for line in _dumped(client, replace, tmp_path)]
    assert shape(_entries(seen)) == shape(_entries(fixture)), (
        f"{name} sends other messages than tests/fixtures/acp/{name}.jsonl records (STET_RECORD_ACP=1 rewrites it)"
    )
    # Each diff the editor is shown arrives while the file still holds the old text (the write, when
    # the agent asks the editor for it, comes after).
    shown = [e for e in client.received() if diffs(e)]
    assert shown, client.tail()
    first = shown[0]
    assert all(text.startswith(f"{OLD}\n") for text in first.files.values() if text is not None)
    assert model.turns(), "the agent never reached the scripted model"


def _dumped(client: AcpClient, replace: dict[str, str], tmp_path: Path) -> list[str]:
    path = tmp_path / "transcript.jsonl"
    client.dump(path, replace)
    return path.read_text().splitlines()


def _entries(lines: list[dict]) -> list[Entry]:
    return [Entry(line["dir"], 0.0, line["msg"]) for line in lines]


# Through Stet: `stet acp -- AGENT` between the scripted editor and the real agent, this tree's Stet
# (`python -m stet`, the tests' PYTHONPATH: support.real_agents.base_env).

FEEDBACK = "keep the limit at 10: the API gateway caps requests at 10 per second"
# What each agent tells its model of a refused permission (seen for real; see tests/fixtures/acp/).
REFUSED = {
    "claude-code-acp": "User refused permission to run tool",
    "gemini": 'Tool "replace" was canceled by the user.',
    "codex-acp": "aborted by user",
}


def through_stet(agent: AcpAgent) -> list[str]:
    return [PYTHON, "-m", "stet", "acp", "--", *agent.command()]


def shows_a_change(entry: Entry) -> bool:
    """A message that shows the editor a change: a tool call or permission with a diff, or a write."""
    return bool(diffs(entry)) or entry.method == "fs/write_text_file"


def task_of(agent: AcpAgent, session: str) -> str:
    return f"acp-{agent.agent_name}-{session}"


def strings(value: object) -> list[str]:
    """Every string in a JSON value (what a model request says, wherever the agent put it)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return []


def said(requests: list[Request], words: str) -> list[str]:
    """The strings of the agent's turns (requests offering tools) that contain `words`."""
    return [s for r in requests if r.main for s in strings(r.body) if words in s]


def newly_said(before: list[Request], after: list[Request], words: str) -> int:
    """How many more times the first turn of `after` says `words` than the last turn of `before`
    did (each request repeats the conversation so far: what a prompt added is the difference)."""
    first = [r for r in after if r.main][:1]
    last = [r for r in before if r.main][-1:]
    return len(said(first, words)) - len(said(last, words))


def workspace(tmp_path: Path) -> Path:
    repo = agent_repo(tmp_path / "repo")
    assert stet("init", cwd=repo).returncode == 0
    return repo


@pytest.mark.parametrize("name", sorted(AGENTS))
def test_real_acp_agent_through_stet_edit_recorded_before_the_editor_sees_it(tmp_path, name):
    """Each report of the edit (the diff of a tool call or of a permission request, the write) reaches
    the editor when the review already holds the change as one pending kept hunk of task
    acp-AGENT-SESSION, the file still holding the old text until the write; the three reports of one
    edit are one hunk; accepted, it is applied; the agent's messages reach the editor otherwise as
    they were."""
    agent = AGENTS[name]
    cmd = through_stet(agent)
    repo = workspace(tmp_path)
    a = repo / "a.py"
    moments: list[tuple[Entry, list[dict]]] = []

    def look(entry: Entry) -> None:
        if shows_a_change(entry):
            moments.append((entry, hunks(repo)))

    with ScriptedModel() as model:
        env = agent.env(tmp_path / "home", model.url, repo)
        client = AcpClient(cmd, repo, env, watch=[a], on_message=look, stderr=tmp_path / "stet.stderr")
        with client:
            client.initialize()
            session = client.new_session()
            model.play([agent.edit(repo, a, OLD, NEW), text("raised")])
            assert client.prompt(session, "raise the limit to 20")["stopReason"] == "end_turn"
        assert client.errors == [], client.errors

    assert a.read_text().startswith(f"{NEW}\n")
    assert moments, client.tail()
    change = ("pending", True, f"{OLD}\n", f"{NEW}\n", task_of(agent, session))
    for entry, seen in moments:
        assert [(h["status"], h["kept"], h["oldText"], h["newText"], h["taskId"]) for h in seen] == [change], (
            entry.body,
            seen,
        )
        if entry.method != "fs/write_text_file" and entry.update.get("status") != "completed":
            assert entry.files[str(a)].startswith(f"{OLD}\n"), entry.body
    (hunk,) = hunks(repo)
    assert hunk["id"] == moments[0][1][0]["id"] and hunk["status"] == "pending", hunk
    # Accepted, it is applied, the file as the agent left it.
    assert stet("accept", hunk["id"], cwd=repo).returncode == 0
    (hunk,) = hunks(repo)
    assert (hunk["status"], hunk["inFile"]) == ("applied", True), hunk
    assert a.read_text().startswith(f"{NEW}\n")
    # The editor saw the agent's messages as the agent sent them (the shapes of the run without Stet).
    assert [m for m in shape(client.transcript) if m[0] == "in"] == [
        m for m in shape(_entries(_allowed_only(name))) if m[0] == "in"
    ]


def _allowed_only(name: str) -> list[dict]:
    """The recorded run's allowed edit (its second prompt), with the initialize and session/new before."""
    lines = [json.loads(line) for line in (FIXTURES / f"{name}.jsonl").read_text().splitlines()]
    prompts = [i for i, line in enumerate(lines) if line["msg"].get("method") == "session/prompt"]
    return lines[: prompts[0]] + lines[prompts[1] :]


@pytest.mark.parametrize("name", sorted(AGENTS))
def test_real_acp_agent_through_stet_refused_in_the_editor_then_allowed(tmp_path, name):
    """The recorded run's two prompts (tests/fixtures/acp/) through Stet: the edit the editor refused
    is a rejected hunk (no feedback: nobody wrote any), the same edit allowed next is a new pending
    kept hunk whose text is in the file; the editor was asked both times (the developer's review
    never rejected it)."""
    agent = AGENTS[name]
    cmd = through_stet(agent)
    repo = workspace(tmp_path)
    a = repo / "a.py"
    with ScriptedModel() as model:
        env = agent.env(tmp_path / "home", model.url, repo)
        permissions: list = ["reject_once", "allow_once"]
        client = AcpClient(cmd, repo, env, permissions=permissions, watch=[a], stderr=tmp_path / "stet.stderr")
        with client:
            client.initialize()
            session = client.new_session()
            model.play([agent.edit(repo, a, OLD, NEW), text("refused")])
            client.prompt(session, "raise the limit to 20")
            assert [(h["status"], h["feedback"]) for h in hunks(repo)] == [("rejected", None)]
            assert a.read_text().startswith(f"{OLD}\n")
            model.play([agent.edit(repo, a, OLD, NEW), text("raised")])
            assert client.prompt(session, "raise it, please")["stopReason"] == "end_turn"
        assert client.errors == [], client.errors
    assert len(client.received("session/request_permission")) == 2
    assert a.read_text().startswith(f"{NEW}\n")
    status = sorted((h["status"], h.get("kept"), h["newText"], h["inFile"], h["taskId"]) for h in hunks(repo))
    task = task_of(agent, session)
    assert status == [("pending", True, f"{NEW}\n", True, task), ("rejected", None, f"{NEW}\n", None, task)], status


@pytest.mark.parametrize("name", sorted(AGENTS))
def test_real_acp_agent_through_stet_redo_of_a_rejected_change_refused_and_told(tmp_path, name):
    """The developer rejects the recorded edit with feedback (`stet reject`): the next prompt carries
    the news; the agent makes the same edit again: Stet answers its permission request with the
    reject option (the editor never sees it), the agent's refusal reaches the model, and the prompt
    after that carries the reason: the developer's words."""
    agent = AGENTS[name]
    cmd = through_stet(agent)
    repo = workspace(tmp_path)
    a = repo / "a.py"
    with ScriptedModel() as model:
        env = agent.env(tmp_path / "home", model.url, repo)
        client = AcpClient(cmd, repo, env, watch=[a], stderr=tmp_path / "stet.stderr")
        with client:
            client.initialize()
            session = client.new_session()
            model.play([agent.edit(repo, a, OLD, NEW), text("raised")])
            client.prompt(session, "raise the limit to 20")
            (hunk,) = hunks(repo)
            assert (hunk["status"], hunk["kept"], hunk["taskId"]) == ("pending", True, task_of(agent, session))
            assert stet("reject", hunk["id"], "--feedback", FEEDBACK, cwd=repo).returncode == 0
            assert a.read_text().startswith(f"{OLD}\n")

            asked = len(client.received("session/request_permission"))
            first = model.requests
            seen = len(first)
            model.play([agent.edit(repo, a, OLD, NEW), text("understood")])
            client.prompt(session, "raise the limit to 20 again")
            second = model.requests[seen:]
            assert newly_said(first, second, FEEDBACK) == 1, "the second prompt did not carry the rejection once"
            assert len(client.received("session/request_permission")) == asked, "the editor was asked"
            assert a.read_text().startswith(f"{OLD}\n")

            seen = len(model.requests)
            model.play([text("the limit stays at 10")])
            client.prompt(session, "what now?")
            third = model.requests[seen:]
            assert said(second + third, REFUSED[name]), "the refusal did not reach the model"
            assert newly_said(second, third, FEEDBACK) == 1, "the prompt after the refused redo did not carry it"
        assert client.errors == [], client.errors

    statuses = [(h["status"], h["newText"], h["feedback"]) for h in hunks(repo)]
    assert statuses and all(s == ("rejected", f"{NEW}\n", FEEDBACK) for s in statuses), statuses


def reaper(pid: int) -> bool:
    """Whether `pid` is `stet acp`'s reaper (relay.REAPER), not the agent."""
    try:
        return b"stet-acp-reaper" in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False


def running(pid: int) -> bool:
    """Whether `pid` still runs (a zombie has ended)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] not in "ZX"


@pytest.mark.parametrize("victim", ["stet", "agent", "both"])
@pytest.mark.parametrize("name", sorted(AGENTS))
def test_real_acp_agent_through_stet_killed_mid_session_loses_nothing(tmp_path, name, victim):
    """SIGKILL of `stet acp`, of the agent, or of both, the moment the editor is shown the change:
    every hunk recorded by then is still in the review, nothing doubled; with the agent alone
    killed, the editor's prompt is answered with an error and `stet acp` exits; with stet killed,
    the agent ends too (its reaper); a new `stet acp` session in the same folder then records its own edit."""
    agent = AGENTS[name]
    cmd = through_stet(agent)
    repo = workspace(tmp_path)
    a, b = repo / "a.py", repo / "b.txt"
    killed: list[int] = []
    agent_pids: list[int] = []
    at_kill: list[list[dict]] = []
    started: list[AcpClient] = []

    def kill(entry: Entry) -> None:
        if killed or not shows_a_change(entry):
            return
        at_kill.append(hunks(repo))
        stet_pid = started[0].proc.pid  # type: ignore[union-attr]
        under = [pid for pid in descendants(stet_pid) if not reaper(pid)]
        # The agent is all `stet acp` started but its reaper: a launcher and what it runs (codex-acp's
        # node script and its native binary, which holds the pipes), Claude Code's adapter and its Claude Code.
        targets = {"stet": [stet_pid], "agent": under, "both": [stet_pid, *under]}[victim]
        for pid in targets:
            os.kill(pid, signal.SIGKILL)
        killed.extend([stet_pid, *under])
        agent_pids.extend(under)

    try:
        with ScriptedModel() as model:
            env = agent.env(tmp_path / "home", model.url, repo)
            client = AcpClient(cmd, repo, env, watch=[a], on_message=kill, stderr=tmp_path / "stet.stderr")
            started.append(client)
            client.start()
            client.initialize()
            session = client.new_session()
            model.play([agent.edit(repo, a, OLD, NEW), text("raised")])
            with pytest.raises(AcpError) as failed:
                client.prompt(session, "raise the limit to 20")
            code = client.close(grace=30)
            if victim == "agent":
                # `stet acp` answered the editor's prompt for the agent that died, then exited.
                assert isinstance(failed.value.error, dict) and failed.value.error.get("code") == -32603, failed.value
                assert code not in (None, 0), code
            assert killed and at_kill, client.tail()
            # The agent ends with stet, though Claude Code's and Codex's adapters ignore their stdin's end.
            deadline = time.monotonic() + 30
            while left := [pid for pid in agent_pids if running(pid)]:
                assert time.monotonic() < deadline, f"the agent was left running: {left}"
                time.sleep(0.1)

            # Every hunk recorded by then is there, as it was; nothing doubled.
            (before,) = at_kill
            assert [h["taskId"] for h in before] == [task_of(agent, session)], before
            after = hunks(repo)
            assert {h["id"]: h["status"] for h in after} == {h["id"]: h["status"] for h in before}, after
            assert duplicates(after) == []

            # A new session in the same folder works and records its own edit.
            fresh = AcpClient(cmd, repo, env, watch=[b], stderr=tmp_path / "stet2.stderr")
            with fresh:
                fresh.initialize()
                again = fresh.new_session()
                model.play([agent.edit(repo, b, "beta", "BETA"), text("done")])
                assert fresh.prompt(again, "capitalise beta in b.txt")["stopReason"] == "end_turn"
            assert fresh.errors == [], fresh.errors
            assert b.read_text() == "alpha\nBETA\ngamma\n"
            now = hunks(repo)
            added = [h for h in now if h["id"] not in {x["id"] for x in after}]
            assert [(h["taskId"], h["status"], h["newText"]) for h in added] == [
                (task_of(agent, again), "pending", "BETA\n")
            ], now
            assert duplicates(now) == []
    finally:
        for c in started:
            c.close(grace=5)
        for pid in killed:  # what the killed processes left behind (the agent's own children)
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
