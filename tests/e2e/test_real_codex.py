"""The real Codex CLI (the pinned npm release, support/agents_install.py) driven end to end by the
scripted model over the Responses API: one apply_patch edit lands in the file, Codex returns the
patch's outcome to the model, and its hooks get the inputs recorded in
tests/fixtures/agents/codex-hooks.jsonl (the shape Stet's Codex hooks read)."""

from __future__ import annotations

import json

from support.capturetools import agent_repo
from support.real_agents import agent_binary, codex_env, codex_exec, dump_hooks, dumped, run, same_shape
from support.scripted_model import ScriptedModel, text, tool

PATCH = "*** Begin Patch\n*** Update File: a.py\n@@\n-LIMIT = 10\n+LIMIT = 20\n*** End Patch\n"
CONTEXT = "Stet: the developer's review of your changes in this checkout: nothing pending"
EVENTS = ["SessionStart", "UserPromptSubmit", "PreToolUse", "PermissionRequest", "PostToolUse", "Stop"]


def test_real_codex_applies_a_scripted_patch_and_its_hooks_see_it(tmp_path):
    exe = agent_binary("codex")
    repo = agent_repo(tmp_path / "repo")
    home, dump = tmp_path / "home", tmp_path / "hooks.jsonl"
    (repo / ".codex").mkdir()
    (repo / ".codex" / "hooks.json").write_text(json.dumps(dump_hooks(EVENTS, dump)))

    with ScriptedModel() as model:
        model.play([tool("apply_patch", PATCH), text("raised")])
        p = run(codex_exec(exe, "raise the limit to 20"), repo, codex_env(home, model.url, repo))
        assert p.returncode == 0, (p.stdout[-2000:], p.stderr[-2000:])
        events = [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]
        assert events[-1]["type"] == "turn.completed", events
        assert (repo / "a.py").read_text().startswith("LIMIT = 20\n")

        first, second = model.turns()
        offered = {t.get("name"): t["type"] for t in first.body["tools"]}
        assert offered["apply_patch"] == "custom", offered
        (output,) = [i for i in second.body["input"] if i.get("type") == "custom_tool_call_output"]
        assert "Success. Updated the following files:\nM a.py" in output["output"], output

    seen = dumped(dump, {str(repo): "$CWD", str(home): "$HOME"})
    assert [e["hook_event_name"] for e in seen] == [
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "Stop",
    ]
    pre = seen[2]
    assert (pre["tool_name"], pre["tool_input"], pre["cwd"]) == ("apply_patch", {"command": PATCH}, "$CWD")
    same_shape(seen, "codex-hooks.jsonl")


def test_real_codex_gives_the_model_hook_context_and_a_deny_reason(tmp_path):
    """SessionStart's additionalContext reaches the model; a PreToolUse answer in Claude Code's deny
    shape stops the patch, the model getting the reason in the call's output (what Stet's Codex hooks
    will answer at a session's start and for the redo of a rejected change)."""
    exe = agent_binary("codex")
    repo = agent_repo(tmp_path / "repo")
    home, dump = tmp_path / "home", tmp_path / "hooks.jsonl"
    reason = "The developer rejected this change to a.py: keep the limit at 10"
    deny = {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": reason}
    (repo / ".codex").mkdir()
    start = {"hookEventName": "SessionStart", "additionalContext": CONTEXT}
    answers = {"PreToolUse": {"hookSpecificOutput": deny}, "SessionStart": {"hookSpecificOutput": start}}
    hooks = dump_hooks(["SessionStart", "PreToolUse"], dump, answers=answers)
    (repo / ".codex" / "hooks.json").write_text(json.dumps(hooks))

    with ScriptedModel() as model:
        model.play([tool("apply_patch", PATCH), text("understood")])
        p = run(codex_exec(exe, "raise the limit to 20"), repo, codex_env(home, model.url, repo))
        assert p.returncode == 0, (p.stdout[-2000:], p.stderr[-2000:])
        assert (repo / "a.py").read_text().startswith("LIMIT = 10\n")
        first, second = model.turns()
        told = [i for i in first.body["input"] if CONTEXT in json.dumps(i)]
        assert [i["role"] for i in told] == ["developer"], told
        (output,) = [i for i in second.body["input"] if i.get("type") == "custom_tool_call_output"]
        assert output["output"].startswith(f"Command blocked by PreToolUse hook: {reason}"), output
