"""The real Gemini CLI (the pinned npm release, support/agents_install.py) driven end to end by the
scripted model over generateContent: one `replace` edit lands in the file, the tool's result goes
back to the model as a functionResponse, and its hooks get the inputs recorded in
tests/fixtures/agents/gemini-cli-hooks.jsonl (the shape Stet's Gemini hooks read)."""

from __future__ import annotations

import json

from support.capturetools import agent_repo
from support.real_agents import agent_binary, dump_hooks, dumped, gemini_env, gemini_prompt, run, same_shape
from support.scripted_model import ScriptedModel, text, tool

CONTEXT = "Stet: the developer's review of your changes in this checkout: nothing pending"
EVENTS = ["SessionStart", "BeforeAgent", "BeforeTool", "AfterTool", "AfterAgent", "SessionEnd"]


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
