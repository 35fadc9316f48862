"""The real Qwen Code (the pinned npm release, support/agents_install.py) driven end to end by the
scripted model over the OpenAI-compatible Chat Completions API: it reads the file (Qwen Code refuses
to edit a file not read in the session), edits it, and its hooks (Claude Code's configuration shape
and events) get the inputs recorded in tests/fixtures/agents/qwen-code-hooks.jsonl."""

from __future__ import annotations

import json

from support.capturetools import agent_repo
from support.real_agents import agent_binary, dump_hooks, dumped, qwen_env, qwen_prompt, run, same_shape
from support.scripted_model import ScriptedModel, text, tool

CONTEXT = "Stet: the developer's review of your changes in this checkout: nothing pending"
EVENTS = ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionEnd"]


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
