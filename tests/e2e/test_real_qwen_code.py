"""The real Qwen Code (the pinned npm release, support/agents_install.py) driven end to end by the
scripted model over the OpenAI-compatible Chat Completions API: it reads the file (Qwen Code refuses
to edit a file not read in the session), edits it, and its hooks (Claude Code's configuration shape
and events) get the inputs recorded in tests/fixtures/agents/qwen-code-hooks.jsonl."""

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
    hook_runs,
    qwen_env,
    qwen_prompt,
    run,
    same_shape,
    teed,
)
from support.scripted_model import Request, ScriptedModel, text, tool

CONTEXT = "Stet: the developer's review of your changes in this checkout: nothing pending"
EVENTS = ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionEnd"]
FEEDBACK = "keep the limit at 10: the API gateway caps requests at 10 per second"
# What Qwen Code reads in each event's answer: Claude Code's (agents/codecs/claude_code.py).
ANSWER_KEYS = {
    "SessionStart": {"hookSpecificOutput", "systemMessage"},
    "UserPromptSubmit": {"hookSpecificOutput", "systemMessage"},
    "PreToolUse": {"hookSpecificOutput"},
    "PostToolUse": {"hookSpecificOutput", "systemMessage"},
    "Stop": {"decision", "reason", "systemMessage"},
}


def test_real_qwen_code_makes_a_scripted_edit_and_its_hooks_see_it(tmp_path):
    exe = agent_binary("qwen")
    repo = agent_repo(tmp_path / "repo")
    home, dump = tmp_path / "home", tmp_path / "hooks.jsonl"
    (repo / ".qwen").mkdir()
    (repo / ".qwen" / "settings.json").write_text(json.dumps(dump_hooks(EVENTS, dump)))
    path = str(repo / "a.py")
    edit = {"file_path": path, "old_string": "LIMIT = 10", "new_string": "LIMIT = 20"}

    with ScriptedModel() as model:
        model.play([tool("read_file", {"file_path": path}), tool("edit", edit), text("raised")])
        p = run(qwen_prompt(exe, "raise the limit to 20"), repo, qwen_env(home, model.url))
        assert p.returncode == 0, (p.stdout[-2000:], p.stderr[-2000:])
        events = [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]
        assert events[-1]["type"] == "result" and events[-1]["is_error"] is False, events[-1]
        assert (repo / "a.py").read_text().startswith("LIMIT = 20\n")

        *_, last = model.turns()
        results = [m for m in last.body["messages"] if m["role"] == "tool"]
        assert len(results) == 2 and "LIMIT = 10" in str(results[0]["content"]), results

    seen = dumped(dump, {str(repo): "$CWD", str(home): "$HOME"})
    tools = [(e["hook_event_name"], e["tool_name"]) for e in seen if "tool_name" in e]
    assert tools == [(event, name) for name in ("read_file", "edit") for event in ("PreToolUse", "PostToolUse")]
    (pre,) = [e for e in seen if e["hook_event_name"] == "PreToolUse" and e["tool_name"] == "edit"]
    assert pre["tool_input"] == {**edit, "file_path": "$CWD/a.py"}
    same_shape(seen, "qwen-code-hooks.jsonl")


def test_real_qwen_code_gives_the_model_hook_context_and_a_deny_reason(tmp_path):
    """Claude Code's answers work for Qwen Code: SessionStart's additionalContext reaches the model, and
    a PreToolUse deny stops the edit, the model getting the reason as the tool's result (what Stet's
    Claude Code hooks answer, read by the Claude-Code-shaped family)."""
    exe = agent_binary("qwen")
    repo = agent_repo(tmp_path / "repo")
    home, dump = tmp_path / "home", tmp_path / "hooks.jsonl"
    reason = "The developer rejected this change to a.py: keep the limit at 10"
    deny = {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": reason}
    (repo / ".qwen").mkdir()
    start = {"hookEventName": "SessionStart", "additionalContext": CONTEXT}
    answers = {"PreToolUse": {"hookSpecificOutput": deny}, "SessionStart": {"hookSpecificOutput": start}}
    hooks = dump_hooks(["SessionStart", "PreToolUse"], dump, matcher="edit", answers=answers)
    hooks["hooks"]["SessionStart"][0]["matcher"] = ""
    (repo / ".qwen" / "settings.json").write_text(json.dumps(hooks))
    path = str(repo / "a.py")
    edit = {"file_path": path, "old_string": "LIMIT = 10", "new_string": "LIMIT = 20"}

    with ScriptedModel() as model:
        model.play([tool("read_file", {"file_path": path}), tool("edit", edit), text("understood")])
        p = run(qwen_prompt(exe, "raise the limit to 20"), repo, qwen_env(home, model.url))
        assert p.returncode == 0, (p.stdout[-2000:], p.stderr[-2000:])
        assert (repo / "a.py").read_text().startswith("LIMIT = 10\n")
        first, *_, last = model.turns()
        told = [m["role"] for m in first.body["messages"] if CONTEXT in json.dumps(m)]
        assert told == ["system"], first.body["messages"]  # added to Qwen Code's system prompt
        results = [m for m in last.body["messages"] if m["role"] == "tool"]
        assert results[-1]["content"] == [{"type": "text", "text": reason}], results


def qwen(exe: Path, repo: Path, env: dict[str, str], prompt: str) -> str:
    """One `qwen -p` run to its end; returns its session id."""
    p = run(qwen_prompt(exe, prompt), repo, env)
    assert p.returncode == 0, (p.stdout[-2000:], p.stderr[-2000:])
    assert "hook" not in p.stderr.lower(), p.stderr
    events = [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]
    assert events[-1]["type"] == "result" and events[-1]["is_error"] is False, events[-1]
    return events[-1]["session_id"]


def tool_texts(request: Request) -> list[str]:
    return [json.dumps(m["content"]) for m in request.body["messages"] if m["role"] == "tool"]


def setup(tmp_path: Path) -> tuple[Path, Path, Path]:
    exe = agent_binary("qwen")
    repo = agent_repo(tmp_path / "repo")
    assert stet("integrate", "qwen", "--stet", STET_HOOK, cwd=repo).returncode == 0
    teed(repo / ".qwen" / "settings.json", tmp_path / "hooks.jsonl")
    commit_all(repo, "qwen set up")
    return exe, repo, tmp_path / "hooks.jsonl"


def test_real_qwen_code_with_stets_hooks_edit_captured_rejected_and_its_redo_denied(tmp_path):
    """`stet integrate qwen`'s hooks in the real Qwen Code: its `edit` captured at the turn's end
    into task qwen-SESSION (kept in the file), the open review told at the next session's start (in
    its system prompt), the redo of the rejected change denied, the model getting the developer's
    words as the tool's result; every hook answered as Qwen Code reads it."""
    exe, repo, log = setup(tmp_path)
    path = str(repo / "a.py")
    edit = {"file_path": path, "old_string": "LIMIT = 10", "new_string": "LIMIT = 20"}

    with ScriptedModel() as model:
        env = {**qwen_env(tmp_path / "home", model.url), "STET_RESIDENT": "off"}
        model.play([tool("read_file", {"file_path": path}), tool("edit", edit), text("raised")])
        session = qwen(exe, repo, env, "raise the limit to 20")
        assert (repo / "a.py").read_text().startswith("LIMIT = 20\n")
        (hunk,) = hunks(repo, "--task", f"qwen-{session}")
        assert (hunk["status"], hunk["oldText"], hunk["newText"]) == ("pending", "LIMIT = 10\n", "LIMIT = 20\n")
        assert hunk["kept"] is True

        assert stet("reject", hunk["id"], "--feedback", FEEDBACK, cwd=repo).returncode == 0
        assert (repo / "a.py").read_text().startswith("LIMIT = 10\n")

        seen = len(model.requests)
        model.play([tool("read_file", {"file_path": path}), tool("edit", edit), text("understood")])
        second = qwen(exe, repo, env, "raise the limit to 20 again")
        assert second != session
        first, *_, last = [r for r in model.requests[seen:] if r.main]
        system = [m["content"] for m in first.body["messages"] if m["role"] == "system"]
        opening = "SessionStart additional context:\nStet: the developer's review of your changes"
        assert any(
            opening in str(s) and f"REJECTED a.py line 1: the developer said: {FEEDBACK}" in str(s) for s in system
        )
        reason = f"The developer rejected this change to a.py: {FEEDBACK}"
        results = [m for m in last.body["messages"] if m["role"] == "tool"]
        assert results[-1]["content"] == [{"type": "text", "text": reason}], results
        assert (repo / "a.py").read_text().startswith("LIMIT = 10\n")
        assert [(h["id"], h["status"]) for h in hunks(repo)] == [(hunk["id"], "rejected")]

    answers = answered_as_expected(hook_runs(log), ANSWER_KEYS)
    notice = f"Stet: 1 hunk(s) of this turn are waiting for review (left in the files; task qwen-{session})"
    assert answers["Stop"] == [{"systemMessage": notice}, {}], answers["Stop"]
    deny = answers["PreToolUse"][-1]["hookSpecificOutput"]
    assert (deny["permissionDecision"], deny["permissionDecisionReason"]) == ("deny", reason)


WRAPPED = "<qwen:user-prompt-submit-context>"  # how Qwen Code wraps a UserPromptSubmit's context


def test_real_qwen_code_told_a_decision_made_while_it_works_once_after_the_next_tool_round(tmp_path):
    """Qwen Code fires UserPromptSubmit with an empty prompt after each round of tool results and
    appends that hook's context after the results: a decision the developer makes while it works is
    told there, once (not lost, not told again at a later round or prompt), and its redo is denied."""
    exe, repo, log = setup(tmp_path)
    path = str(repo / "a.py")
    edit = {"file_path": path, "old_string": "LIMIT = 10", "new_string": "LIMIT = 20"}

    with ScriptedModel() as model:
        env = {**qwen_env(tmp_path / "home", model.url), "STET_RESIDENT": "off"}
        model.play([tool("read_file", {"file_path": path}), tool("edit", edit), text("raised")])
        qwen(exe, repo, env, "raise the limit to 20")
        (hunk,) = hunks(repo)

        def rejected_meanwhile(_body: dict):
            assert stet("reject", hunk["id"], "--feedback", FEEDBACK, cwd=repo).returncode == 0
            return tool("read_file", {"file_path": str(repo / "b.txt")})

        seen = len(model.requests)
        model.play([rejected_meanwhile, tool("read_file", {"file_path": path}), tool("edit", edit), text("ok")])
        qwen(exe, repo, env, "look at b.txt, then raise the limit")
        turns = [r for r in model.requests[seen:] if r.main]
        assert len(turns) == 4, [r.answer for r in turns]

        def told(request: Request) -> list[str]:
            return [
                json.dumps(m["content"])
                for m in request.body["messages"]
                if m["role"] == "user"
                and WRAPPED in json.dumps(m["content"])
                and "REJECTED" in json.dumps(m["content"])
            ]

        assert [len(told(r)) for r in turns] == [0, 1, 1, 1], "told once, after the round it was decided in"
        assert FEEDBACK in told(turns[1])[0]
        messages = turns[1].body["messages"]
        assert messages[-2]["role"] == "tool" and WRAPPED in json.dumps(messages[-1]), messages[-2:]
        reason = f"The developer rejected this change to a.py: {FEEDBACK}"
        assert [m for m in turns[-1].body["messages"] if m["role"] == "tool"][-1]["content"][0]["text"] == reason
        assert (repo / "a.py").read_text().startswith("LIMIT = 10\n")

    runs = hook_runs(log)
    answered_as_expected(runs, ANSWER_KEYS)
    prompts = [r for r in runs if r["input"]["hook_event_name"] == "UserPromptSubmit"]
    with_context = [r["input"]["prompt"] for r in prompts if "additionalContext" in r["stdout"]]
    assert with_context == [""], "told at the empty prompt after the tool round, and only there"


def test_real_qwen_code_sent_back_with_the_developers_feedback_once(tmp_path):
    """Request changes (`stet integrate qwen --request-changes`) in the real Qwen Code: the developer
    rejects a hunk of the session with feedback after its last tool round (no empty prompt follows
    to tell it); at the turn's end Stop answers `decision: "block"`, the model gets the feedback as a
    user message and goes on, and the next Stop (`stop_hook_active`) lets it end: once, no loop."""
    exe = agent_binary("qwen")
    repo = agent_repo(tmp_path / "repo")
    assert stet("integrate", "qwen", "--stet", STET_HOOK, "--request-changes", cwd=repo).returncode == 0
    log = tmp_path / "hooks.jsonl"
    teed(repo / ".qwen" / "settings.json", log)
    commit_all(repo, "qwen set up")
    path, other = str(repo / "a.py"), str(repo / "b.txt")
    edit = {"file_path": path, "old_string": "LIMIT = 10", "new_string": "LIMIT = 20"}

    with ScriptedModel() as model:
        env = {**qwen_env(tmp_path / "home", model.url), "STET_RESIDENT": "off"}
        model.play([tool("read_file", {"file_path": path}), tool("edit", edit), text("raised")])
        session = qwen(exe, repo, env, "raise the limit to 20")
        (hunk,) = hunks(repo, "--task", f"qwen-{session}")

        def rejected_meanwhile(_body: dict):
            assert stet("reject", hunk["id"], "--feedback", FEEDBACK, cwd=repo).returncode == 0
            return text("b.txt done")

        seen = len(model.requests)
        capitalise = {"file_path": other, "old_string": "beta", "new_string": "BETA"}
        steps = [tool("read_file", {"file_path": other}), tool("edit", capitalise), rejected_meanwhile]
        model.play([*steps, text("the limit stays at 10")])
        p = run([*qwen_prompt(exe, "now capitalise beta in b.txt"), "--resume", session], repo, env)
        assert p.returncode == 0, (p.stdout[-2000:], p.stderr[-2000:])
        turns = [r for r in model.requests[seen:] if r.main]
        assert len(turns) == 4, [r.answer for r in turns]
        new = turns[3].body["messages"][len(turns[2].body["messages"]) :]
        back = ["".join(part["text"] for part in m["content"]) for m in new if m["role"] == "user"]
        assert len(back) == 1 and f"REJECTED a.py line 1: {FEEDBACK}" in back[0], new
        assert back[0].startswith("Stet: the developer rejected changes of yours with feedback"), back
        assert (repo / "b.txt").read_text() == "alpha\nBETA\ngamma\n"
        statuses = sorted((h["status"], h["newText"]) for h in hunks(repo, "--task", f"qwen-{session}"))
        assert statuses == [("pending", "BETA\n"), ("rejected", "LIMIT = 20\n")], statuses

    runs = hook_runs(log)
    answered_as_expected(runs, ANSWER_KEYS)
    ends = [r for r in runs if r["input"]["hook_event_name"] == "Stop"]
    decided = [(r["input"]["stop_hook_active"], json.loads(r["stdout"] or "{}").get("decision")) for r in ends]
    assert decided == [(False, None), (False, "block"), (True, None)], decided


def test_real_qwen_code_an_edit_its_before_hook_missed_is_captured_from_its_own_report(tmp_path):
    """Without Stet's PreToolUse (a hook that failed, timed out or was removed), the edit's PostToolUse
    is the first Stet hears of it: Qwen Code reports the file before the call in
    `tool_response.returnDisplay.originalContent`, which gives exactly the file as it is now once the
    edit is made, so the turn is captured against it (said to the model: not checked before)."""
    exe, repo, log = setup(tmp_path)
    settings = json.loads((repo / ".qwen" / "settings.json").read_text())
    del settings["hooks"]["PreToolUse"]
    (repo / ".qwen" / "settings.json").write_text(json.dumps(settings))
    (repo / "a.py").write_text((repo / "a.py").read_text().replace("LIMIT = 10", "LIMIT = 15"))  # not committed
    path = str(repo / "a.py")
    edit = {"file_path": path, "old_string": "LIMIT = 15", "new_string": "LIMIT = 20"}

    with ScriptedModel() as model:
        env = {**qwen_env(tmp_path / "home", model.url), "STET_RESIDENT": "off"}
        model.play([tool("read_file", {"file_path": path}), tool("edit", edit), text("raised")])
        session = qwen(exe, repo, env, "raise the limit to 20")
    (hunk,) = hunks(repo, "--task", f"qwen-{session}")
    assert (hunk["oldText"], hunk["newText"]) == ("LIMIT = 15\n", "LIMIT = 20\n"), "from Qwen Code's report"
    (after,) = [r for r in hook_runs(log) if r["input"]["hook_event_name"] == "PostToolUse"]
    said = json.loads(after["stdout"])["hookSpecificOutput"]["additionalContext"]
    assert said.endswith("captured for review at the end of the turn against the file as Qwen Code reported it"), said
