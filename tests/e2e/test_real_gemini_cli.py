"""The real Gemini CLI (the pinned npm release, support/agents_install.py) driven end to end by the
scripted model over generateContent: one `replace` edit lands in the file, the tool's result goes
back to the model as a functionResponse, and its hooks get the inputs recorded in
tests/fixtures/agents/gemini-cli-hooks.jsonl (the shape Stet's Gemini hooks read)."""

from __future__ import annotations

import json
from pathlib import Path

from support.capturetools import agent_repo, hunks
from support.clitools import commit_all, stet
from support.real_agents import (
    STET_HOOK,
    agent_binary,
    answered_as_expected,
    dump_hooks,
    dumped,
    gemini_env,
    gemini_prompt,
    hook_runs,
    run,
    same_shape,
    teed,
)
from support.scripted_model import Request, ScriptedModel, text, tool

CONTEXT = "Stet: the developer's review of your changes in this checkout: nothing pending"
EVENTS = ["SessionStart", "BeforeAgent", "BeforeTool", "AfterTool", "AfterAgent", "SessionEnd"]
FEEDBACK = "keep the limit at 10: the API gateway caps requests at 10 per second"
# What Gemini CLI reads in each event's answer (agents/codecs/gemini.py writes no other key).
ANSWER_KEYS = {
    "SessionStart": {"hookSpecificOutput", "systemMessage"},
    "BeforeAgent": {"hookSpecificOutput", "systemMessage"},
    "BeforeTool": {"decision", "reason", "systemMessage"},
    "AfterTool": {"hookSpecificOutput", "systemMessage"},
    "AfterAgent": {"decision", "reason", "systemMessage"},
}


def test_real_gemini_cli_makes_a_scripted_edit_and_its_hooks_see_it(tmp_path):
    exe = agent_binary("gemini")
    repo = agent_repo(tmp_path / "repo")
    home, dump = tmp_path / "home", tmp_path / "hooks.jsonl"
    (repo / ".gemini").mkdir()
    (repo / ".gemini" / "settings.json").write_text(json.dumps(dump_hooks(EVENTS, dump, matcher="*")))
    edit = {"file_path": str(repo / "a.py"), "old_string": "LIMIT = 10", "new_string": "LIMIT = 20"}

    with ScriptedModel() as model:
        model.play([tool("replace", {**edit, "instruction": "raise the limit"}), text("raised")])
        p = run(gemini_prompt(exe, "raise the limit to 20"), repo, gemini_env(home, model.url))
        assert p.returncode == 0, (p.stdout[-2000:], p.stderr[-2000:])
        events = [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]
        assert events[-1]["type"] == "result" and events[-1]["status"] == "success", events
        assert (repo / "a.py").read_text().startswith("LIMIT = 20\n")

        first, second = model.turns()
        declared = {f["name"] for t in first.body["tools"] for f in t.get("functionDeclarations", [])}
        assert {"replace", "write_file"} <= declared, declared
        responses = [
            part["functionResponse"]
            for c in second.body["contents"]
            for part in c["parts"]
            if "functionResponse" in part
        ]
        assert (
            responses[-1]["name"] == "replace" and "Successfully modified file" in responses[-1]["response"]["output"]
        )

    seen = dumped(dump, {str(repo): "$CWD", str(home): "$HOME"})
    assert [e["hook_event_name"] for e in seen] == EVENTS
    before = seen[2]
    assert (before["tool_name"], before["tool_input"]["file_path"]) == ("replace", "$CWD/a.py")
    same_shape(seen, "gemini-cli-hooks.jsonl")


def test_real_gemini_cli_gives_the_model_hook_context_and_a_deny_reason(tmp_path):
    """SessionStart's additionalContext reaches the model; a BeforeTool `{"decision": "deny", "reason"}`
    stops the edit, the model getting the reason as the call's error (what Stet's Gemini hooks will
    answer at a session's start and for the redo of a rejected change)."""
    exe = agent_binary("gemini")
    repo = agent_repo(tmp_path / "repo")
    home, dump = tmp_path / "home", tmp_path / "hooks.jsonl"
    reason = "The developer rejected this change to a.py: keep the limit at 10"
    (repo / ".gemini").mkdir()
    start = {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": CONTEXT}}
    answers = {"BeforeTool": {"decision": "deny", "reason": reason}, "SessionStart": start}
    hooks = dump_hooks(["SessionStart", "BeforeTool"], dump, matcher="*", answers=answers)
    (repo / ".gemini" / "settings.json").write_text(json.dumps(hooks))
    edit = {"file_path": str(repo / "a.py"), "old_string": "LIMIT = 10", "new_string": "LIMIT = 20"}

    with ScriptedModel() as model:
        model.play([tool("replace", {**edit, "instruction": "raise the limit"}), text("understood")])
        p = run(gemini_prompt(exe, "raise the limit to 20"), repo, gemini_env(home, model.url))
        assert p.returncode == 0, (p.stdout[-2000:], p.stderr[-2000:])
        assert (repo / "a.py").read_text().startswith("LIMIT = 10\n")
        first, *_, last = model.turns()
        told = [p["text"] for c in first.body["contents"] for p in c["parts"] if CONTEXT in p.get("text", "")]
        assert told and all("<hook_context>" in t for t in told), told
        responses = [
            part["functionResponse"] for c in last.body["contents"] for part in c["parts"] if "functionResponse" in part
        ]
        assert responses[-1]["response"] == {"error": f"Tool execution blocked: {reason}"}, responses


def gemini(exe: Path, repo: Path, env: dict[str, str], prompt: str) -> tuple[str, list[dict], str]:
    """One `gemini -p` run to its end; (its session id, its stream-json events, its stderr)."""
    p = run(gemini_prompt(exe, prompt), repo, env)
    assert p.returncode == 0, (p.stdout[-2000:], p.stderr[-2000:])
    events = [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]
    assert events[-1]["type"] == "result" and events[-1]["status"] == "success", events
    assert "failed for event" not in p.stderr, p.stderr  # Gemini CLI's word for a hook that failed
    return events[0]["session_id"], events, p.stderr


def function_responses(request: Request) -> list[dict]:
    return [
        part["functionResponse"] for c in request.body["contents"] for part in c["parts"] if "functionResponse" in part
    ]


def test_real_gemini_cli_with_stets_hooks_edit_captured_rejected_and_its_redo_denied(tmp_path):
    """`stet integrate gemini`'s hooks in the real Gemini CLI: its `replace` captured at the turn's
    end (AfterAgent) into task gemini-SESSION (kept in the file), the open review told at the next
    session's start (inside <hook_context> before the prompt), the redo of the rejected change
    denied, the model getting the developer's words as the call's error; every hook answered as
    Gemini CLI reads it."""
    exe = agent_binary("gemini")
    repo = agent_repo(tmp_path / "repo")
    assert stet("integrate", "gemini", "--stet", STET_HOOK, cwd=repo).returncode == 0
    log = tmp_path / "hooks.jsonl"
    teed(repo / ".gemini" / "settings.json", log)
    commit_all(repo, "gemini set up")
    edit = {"file_path": str(repo / "a.py"), "old_string": "LIMIT = 10", "new_string": "LIMIT = 20"}
    edit["instruction"] = "raise the limit"

    with ScriptedModel() as model:
        env = {**gemini_env(tmp_path / "home", model.url), "STET_RESIDENT": "off"}
        model.play([tool("replace", edit), text("raised")])
        session, _, stderr = gemini(exe, repo, env, "raise the limit to 20")
        assert (repo / "a.py").read_text().startswith("LIMIT = 20\n")
        (hunk,) = hunks(repo, "--task", f"gemini-{session}")
        assert (hunk["status"], hunk["oldText"], hunk["newText"]) == ("pending", "LIMIT = 10\n", "LIMIT = 20\n")
        assert (hunk["kept"], hunk["message"]) == (True, "gemini: raise the limit to 20")
        notice = f"Stet: 1 hunk(s) of this turn are waiting for review (left in the files; task gemini-{session})"
        assert f"Hook system message: {notice}" in stderr, stderr

        assert stet("reject", hunk["id"], "--feedback", FEEDBACK, cwd=repo).returncode == 0
        assert (repo / "a.py").read_text().startswith("LIMIT = 10\n")

        seen = len(model.requests)
        model.play([tool("replace", edit), text("understood")])
        second, events, _ = gemini(exe, repo, env, "raise the limit to 20 again")
        assert second != session
        first, *_, last = [r for r in model.requests[seen:] if r.main]
        prompt = first.body["contents"][-1]["parts"][-1]["text"]
        # Gemini CLI puts it before the prompt, its own escapes (&gt;) in it.
        assert prompt.startswith("<hook_context>Stet: the developer's review of your changes"), prompt
        assert f"REJECTED a.py line 1: the developer said: {FEEDBACK}" in prompt, prompt
        assert prompt.endswith("</hook_context>\n\nraise the limit to 20 again"), prompt
        reason = f"The developer rejected this change to a.py: {FEEDBACK}"
        assert function_responses(last)[-1]["response"] == {"error": f"Tool execution blocked: {reason}"}
        (result,) = [e for e in events if e["type"] == "tool_result"]
        assert result["status"] == "error", result
        assert (repo / "a.py").read_text().startswith("LIMIT = 10\n")
        assert [(h["id"], h["status"]) for h in hunks(repo)] == [(hunk["id"], "rejected")]

    runs = hook_runs(log)
    answers = answered_as_expected(runs, ANSWER_KEYS)
    one = ["SessionStart", "BeforeAgent", "BeforeTool", "AfterTool", "AfterAgent"]
    assert [r["input"]["hook_event_name"] for r in runs] == [*one, *one[:3], "AfterAgent"]
    assert answers["AfterAgent"] == [{"systemMessage": notice}, {}], answers["AfterAgent"]
    assert answers["BeforeTool"][1] == {"decision": "deny", "reason": reason}


def test_real_gemini_cli_sent_back_with_the_developers_feedback_once(tmp_path):
    """Request changes (`stet integrate gemini --request-changes`) in the real Gemini CLI: while the
    session works on (`--resume latest`), the developer rejects a hunk of it with feedback; at the
    turn's end AfterAgent answers `decision: "deny"`, the model gets the feedback as a user message
    and goes on, and the next AfterAgent (`stop_hook_active`) lets it end: once, no loop."""
    exe = agent_binary("gemini")
    repo = agent_repo(tmp_path / "repo")
    assert stet("integrate", "gemini", "--stet", STET_HOOK, "--request-changes", cwd=repo).returncode == 0
    log = tmp_path / "hooks.jsonl"
    teed(repo / ".gemini" / "settings.json", log)
    commit_all(repo, "gemini set up")
    edit = {"file_path": str(repo / "a.py"), "old_string": "LIMIT = 10", "new_string": "LIMIT = 20"}
    other = {"file_path": str(repo / "b.txt"), "old_string": "beta", "new_string": "BETA"}

    with ScriptedModel() as model:
        env = {**gemini_env(tmp_path / "home", model.url), "STET_RESIDENT": "off"}
        model.play([tool("replace", {**edit, "instruction": "raise"}), text("raised")])
        session, _, _ = gemini(exe, repo, env, "raise the limit to 20")
        (hunk,) = hunks(repo, "--task", f"gemini-{session}")

        def rejected_meanwhile(_body: dict):
            assert stet("reject", hunk["id"], "--feedback", FEEDBACK, cwd=repo).returncode == 0
            return tool("replace", {**other, "instruction": "capitalise"})

        seen = len(model.requests)
        model.play([rejected_meanwhile, text("b.txt done"), text("the limit stays at 10")])
        p = run([*gemini_prompt(exe, "now capitalise beta in b.txt"), "--resume", "latest"], repo, env)
        assert p.returncode == 0, (p.stdout[-2000:], p.stderr[-2000:])
        assert "failed for event" not in p.stderr, p.stderr
        turns = [r for r in model.requests[seen:] if r.main]
        assert len(turns) == 3, [r.answer for r in turns]
        texts = [part.get("text", "") for c in turns[2].body["contents"] if c["role"] == "user" for part in c["parts"]]
        back = [t for t in texts if "Stet: the developer rejected changes of yours with feedback" in t]
        assert len(back) == 1 and f"REJECTED a.py line 1: {FEEDBACK}" in back[0], texts
        assert (repo / "b.txt").read_text() == "alpha\nBETA\ngamma\n"
        statuses = sorted((h["status"], h["newText"]) for h in hunks(repo, "--task", f"gemini-{session}"))
        assert statuses == [("pending", "BETA\n"), ("rejected", "LIMIT = 20\n")], statuses

    runs = hook_runs(log)
    answered_as_expected(runs, ANSWER_KEYS)
    ends = [r for r in runs if r["input"]["hook_event_name"] == "AfterAgent"]
    decided = [(r["input"]["stop_hook_active"], json.loads(r["stdout"] or "{}").get("decision")) for r in ends]
    assert decided == [(False, None), (False, "deny"), (True, None)], decided
