"""The real ACP agents (Claude Code's adapter, Gemini CLI's ACP mode, Codex's adapter: the pinned npm
releases, support/agents_install.py), driven by a scripted editor (support/acp_client.py) and the
scripted model (support/scripted_model.py).

Without Stet: what each sends an editor for a one-file edit the editor refuses, then the same edit
allowed, as recorded in tests/fixtures/acp/AGENT.jsonl (STET_RECORD_ACP=1 rewrites them): the
shapes Stet's ACP part reads."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from support.acp_agents import AGENTS, AcpAgent
from support.acp_client import AcpClient, Entry
from support.capturetools import agent_repo
from support.scripted_model import ScriptedModel, text

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
