"""The agents' codecs, in this process: each agent's hook input (the exact JSON it sends) as the
loop's events, and the loop's answers in the agent's own shape; Codex's project configuration
merged as text."""

from __future__ import annotations

import json
import tomllib

import pytest

from stet.agents.codecs import claude_code, codex, copilot, cursor, gemini, qwen
from stet.agents.setups.codex import config_with, hooks_with
from stet.agents.turn import Answer, Meaning, Reported, ResultTooLarge
from stet.errors import InvalidParams

BASE = {
    "session_id": "019a6f2e-6c1d-7b42-9a8e-3f5d2c1b0a97",
    "transcript_path": "/home/dev/.codex/sessions/rollout.jsonl",
    "cwd": "/work/proj",
    "model": "gpt-5-codex",
    "permission_mode": "default",
}


def codex_event(name: str, **fields: object) -> dict:
    return {**BASE, "hook_event_name": name, **({} if name == "SessionStart" else {"turn_id": "t1"}), **fields}


def test_codex_events_by_meaning():
    assert codex.decode(codex_event("SessionStart", source="startup")).meaning is Meaning.START
    assert codex.decode(codex_event("UserPromptSubmit", prompt="go")).meaning is Meaning.PROMPT
    assert codex.decode(codex_event("Stop", stop_hook_active=False)).meaning is Meaning.END
    assert codex.decode(codex_event("PermissionRequest", tool_name="exec_command")) is None
    # Codex names a command run through exec_command `Bash` to its hooks (seen with the real Codex).
    shell = codex_event("PreToolUse", tool_name="Bash", tool_input={"command": "ls"})
    assert codex.decode(shell) is None, "not an edit"
    heredoc = codex_event("PreToolUse", tool_name="Bash", tool_input={"command": "cat <<'EOF'\nx\nEOF\n"})
    assert codex.decode(heredoc) is None, "another program's heredoc"
    with pytest.raises(InvalidParams):
        codex.decode(["not", "an", "object"])


def test_an_apply_patch_is_one_change_per_file_its_paths_from_cwd():
    patch = (
        "*** Begin Patch\n*** Add File: new.txt\n+hi\n*** Delete File: gone.txt\n"
        "*** Update File: src/a.py\n*** Move to: src/b.py\n@@\n-x = 1\n+x = 2\n"
        "*** Update File: c.py\n@@\n-y\n+z\n*** End Patch\n"
    )
    event = codex.decode(codex_event("PreToolUse", tool_name="apply_patch", tool_input={"command": patch}))
    assert event.meaning is Meaning.BEFORE
    paths = [(c.path, c.source) for c in event.changes]
    assert paths == [
        ("/work/proj/new.txt", None),
        ("/work/proj/gone.txt", None),
        ("/work/proj/src/a.py", None),
        ("/work/proj/src/b.py", "/work/proj/src/a.py"),
        ("/work/proj/c.py", None),
    ]
    made = [c.after(before, 1000) for c, before in zip(event.changes, ["", "bye\n", "x = 1\n", "x = 1\n", "y\n"])]
    assert made == ["hi\n", "", "", "x = 2\n", "z\n"]
    assert event.changes[4].after("nothing like it\n", 1000) is None, "Codex will fail it: nothing told"
    with pytest.raises(ResultTooLarge):
        event.changes[0].after("", 2)
    broken = codex_event("PreToolUse", tool_name="apply_patch", tool_input={"command": "*** Begin Patch\n"})
    assert codex.decode(broken) is None


@pytest.mark.parametrize("head", ["apply_patch <<'EOF'", 'applypatch <<"EOF"', "  apply_patch  <<EOF"])
def test_a_patch_run_through_codexs_shell_is_the_same_patch(head):
    """A model offered no apply_patch tool runs `apply_patch <<'EOF' … EOF` through exec_command:
    Codex's PreToolUse sees a Bash call with that command."""
    patch = "*** Begin Patch\n*** Update File: a.py\n@@\n-x = 1\n+x = 2\n*** End Patch\n"
    command = f"{head}\n{patch}EOF\n"
    event = codex.decode(codex_event("PreToolUse", tool_name="Bash", tool_input={"command": command}))
    (change,) = event.changes
    assert (event.meaning, change.path, change.after("x = 1\n", 1000)) == (Meaning.BEFORE, "/work/proj/a.py", "x = 2\n")
    assert codex.through_shell(command) and not codex.through_shell("echo apply_patch <<EOF\nEOF")
    assert not codex.through_shell("apply_patch_helper <<EOF\nEOF") and not codex.through_shell(patch)


def test_codex_answers():
    start = codex.decode(codex_event("SessionStart", source="startup"))
    assert codex.encode(start, Answer()) == {}
    assert codex.encode(start, Answer(context="review")) == {
        "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "review"}
    }
    before = codex.decode(
        codex_event(
            "PreToolUse",
            tool_name="apply_patch",
            tool_input={"command": "*** Begin Patch\n*** Delete File: a\n*** End Patch"},
        )
    )
    assert codex.encode(before, Answer(deny="The developer rejected this change to a: no")) == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "The developer rejected this change to a: no",
        }
    }
    assert codex.encode(before, Answer(ask="too large")) == {"systemMessage": "too large"}, "Codex has no ask"
    assert codex.encode(before, Answer()) == {}, "allowed: nothing (Codex refuses allow)"


def test_claude_code_answers_keep_their_shape():
    pre = claude_code.decode(
        {
            "session_id": "s",
            "cwd": "/p",
            "hook_event_name": "PreToolUse",
            "tool_name": "Edit",
            "tool_input": {"file_path": "/p/a.py", "old_string": "a", "new_string": "b"},
        }
    )
    assert pre.changes[0].after("a a", 100) == "b a"
    assert claude_code.encode(pre, Answer(ask="why"))["hookSpecificOutput"]["permissionDecision"] == "ask"
    post = claude_code.decode(
        {
            "session_id": "s",
            "cwd": "/p",
            "hook_event_name": "PostToolUse",
            "tool_name": "Write",
            "tool_input": {"file_path": "/p/n.py", "content": "x"},
            "tool_response": {"type": "create"},
        }
    )
    assert post.changes[0].reported.before is None
    assert claude_code.encode(post, Answer(context="t", notice="t")) == {
        "systemMessage": "t",
        "hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "t"},
    }


def test_codex_config_toml_gains_stets_server_as_text_and_keeps_the_rest():
    text = '# my settings\nmodel = "o3"  # keep\n\n[mcp_servers.docs]\ncommand = "d"\n'
    out, added, warning = config_with(text, ["/opt/stet dir/stet"])
    assert out.startswith(text) and added == ["mcp_servers.stet"] and warning is None
    assert tomllib.loads(out)["mcp_servers"]["stet"] == {
        "command": "/opt/stet dir/stet",
        "args": ["mcp", "--agent", "codex"],
    }
    assert config_with(out, ["/opt/stet dir/stet"]) == (out, [], None), "already there"
    assert config_with(out, ["other"])[2] is not None, "someone else's stet server: left, said"
    assert (
        config_with("", ['a"b\\c'])[0]
        == '[mcp_servers.stet]\ncommand = "a\\"b\\\\c"\nargs = ["mcp", "--agent", "codex"]\n'
    )
    with pytest.raises(InvalidParams, match="not valid TOML"):
        config_with("x = = 1\n", ["stet"])
    with pytest.raises(InvalidParams, match="add it yourself"):
        config_with('mcp_servers = { a = { command = "a" } }\n', ["stet"])


def test_codex_hooks_json_merges_like_claude_codes():
    mine = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}, "other": 1}
    out, changed = hooks_with(mine, "stet hook codex")
    assert out["other"] == 1 and "enabledMcpjsonServers" not in out
    assert [h["command"] for e in out["hooks"]["Stop"] for h in e["hooks"]] == ["say done", "stet hook codex"]
    assert out["hooks"]["PreToolUse"] == [
        {"matcher": "apply_patch|Bash", "hooks": [{"type": "command", "command": "stet hook codex"}]}
    ]
    assert out["hooks"]["PostToolUse"][0]["matcher"] == "apply_patch"
    assert len(changed) == 5
    assert hooks_with(out, "stet hook codex") == (out, [])
    earlier = json.loads(json.dumps(out))
    earlier["hooks"]["PreToolUse"][0]["matcher"] = "apply_patch"  # as an earlier `integrate` wrote it
    rematched, said = hooks_with(earlier, "stet hook codex")
    assert rematched == out and said == ["hooks.PreToolUse (Stet's hook on apply_patch|Bash)"]
    moved, said = hooks_with(out, "/new/stet hook codex")
    assert [h["command"] for e in moved["hooks"]["Stop"] for h in e["hooks"]] == ["say done", "/new/stet hook codex"]


def gemini_event(name: str, **fields: object) -> dict:
    base = {"session_id": "g1", "transcript_path": "/t.json", "cwd": "/work/proj", "timestamp": "2026-12-06T20:00:00Z"}
    return {**base, "hook_event_name": name, **fields}


def test_gemini_events_by_meaning_and_its_edits():
    assert gemini.decode(gemini_event("BeforeAgent", prompt="go")).meaning is Meaning.PROMPT
    assert gemini.decode(gemini_event("AfterAgent", stop_hook_active=False)).meaning is Meaning.END
    # The real Gemini CLI gives AfterAgent the turn's prompt: the hunks' message says it.
    end = gemini.decode(gemini_event("AfterAgent", prompt="raise the limit", prompt_response="done"))
    assert end.asked() == "raise the limit"
    assert gemini.decode(gemini_event("AfterAgent", prompt=["not", "text"])).asked() is None
    assert (
        gemini.decode(gemini_event("BeforeTool", tool_name="run_shell_command", tool_input={"command": "ls"})) is None
    )
    replace = {"file_path": "/work/proj/a.py", "old_string": "x", "new_string": "y", "instruction": "i"}
    (change,) = gemini.decode(gemini_event("BeforeTool", tool_name="replace", tool_input=replace)).changes
    assert change.path == "/work/proj/a.py"
    assert change.after("x = 1\n", 100) == "y = 1\n"
    assert change.after("x x\n", 100) is None, "two where one is expected: Gemini CLI fails the call"
    every = {**replace, "expected_replacements": 2}
    (change,) = gemini.decode(gemini_event("BeforeTool", tool_name="replace", tool_input=every)).changes
    assert change.after("x x\n", 100) == "y y\n"
    create = {"file_path": "new.py", "old_string": "", "new_string": "n\n"}
    (change,) = gemini.decode(gemini_event("BeforeTool", tool_name="replace", tool_input=create)).changes
    assert change.path == "/work/proj/new.py" and change.after("", 100) == "n\n" and change.after("old", 100) is None
    write = {"file_path": "/work/proj/w.txt", "content": "abc"}
    (change,) = gemini.decode(gemini_event("BeforeTool", tool_name="write_file", tool_input=write)).changes
    with pytest.raises(ResultTooLarge):
        change.after("", 2)
    display = {"returnDisplay": {"originalContent": None, "newContent": "abc"}}
    after = gemini.decode(gemini_event("AfterTool", tool_name="write_file", tool_input=write, tool_response=display))
    assert after.meaning is Meaning.AFTER and after.changes[0].reported.before is None


def test_gemini_answers():
    before = gemini.decode(
        gemini_event("BeforeTool", tool_name="write_file", tool_input={"file_path": "/a", "content": ""})
    )
    assert gemini.encode(before, Answer(deny="no")) == {"decision": "deny", "reason": "no"}
    assert gemini.encode(before, Answer()) == {}
    prompt = gemini.decode(gemini_event("BeforeAgent", prompt="go"))
    assert gemini.encode(prompt, Answer(context="told")) == {
        "hookSpecificOutput": {"hookEventName": "BeforeAgent", "additionalContext": "told"}
    }


def test_copilot_events_its_tool_args_as_text_or_object_and_only_a_deny_answered():
    base = {"sessionId": "c1", "timestamp": 1765051200000, "cwd": "/work/proj"}
    args = {"path": "src/a.py", "old_str": "x", "new_str": "y"}
    for given in (args, json.dumps(args)):
        event = copilot.decode({**base, "hookEventName": "preToolUse", "toolName": "edit", "toolArgs": given})
        (change,) = event.changes
        assert event.meaning is Meaning.BEFORE and change.path == "/work/proj/src/a.py"
        assert change.after("x = 1\n", 100) == "y = 1\n" and change.after("x x\n", 100) is None
    create = {"path": "/work/proj/n.txt", "file_text": "hi\n"}
    event = copilot.decode({**base, "hookEventName": "postToolUse", "toolName": "create", "toolArgs": create})
    assert event.meaning is Meaning.AFTER and event.changes[0].after("", 100) == "hi\n"
    assert copilot.decode({**base, "hookEventName": "preToolUse", "toolName": "bash", "toolArgs": {}}) is None
    assert copilot.decode({**base, "hookEventName": "sessionStart", "source": "new"}) is None
    assert copilot.decode({**base, "hookEventName": "agentStop"}).meaning is Meaning.END
    assert copilot.encode(event, Answer(deny="no")) == {"permissionDecision": "deny", "permissionDecisionReason": "no"}
    assert copilot.encode(event, Answer(notice="n", context="c")) == {}
    with pytest.raises(InvalidParams, match="sessionId"):
        copilot.decode({"hookEventName": "agentStop"})


def test_cursor_events_and_answers():
    base = {"conversation_id": "k1", "generation_id": "g", "workspace_roots": ["/work/proj"]}
    write = {"file_path": "src/a.py", "content": "new\n"}
    event = cursor.decode({**base, "hook_event_name": "preToolUse", "tool_name": "Write", "tool_input": write})
    (change,) = event.changes
    assert change.path == "/work/proj/src/a.py" and change.after("old\n", 100) == "new\n"
    replace = {"file_path": "/work/proj/a.py", "old_string": "x", "new_string": "y"}
    event = cursor.decode({**base, "hook_event_name": "preToolUse", "tool_name": "Write", "tool_input": replace})
    assert event.changes[0].after("x\n", 100) == "y\n"
    assert cursor.decode({**base, "hook_event_name": "preToolUse", "tool_name": "Shell", "tool_input": {}}) is None
    after = cursor.decode({**base, "hook_event_name": "afterFileEdit", "file_path": "/work/proj/a.py", "edits": []})
    assert after.meaning is Meaning.AFTER
    assert cursor.decode({**base, "hook_event_name": "beforeSubmitPrompt", "prompt": "p"}) is None
    assert cursor.encode(event, Answer(deny="no")) == {
        "permission": "deny",
        "agent_message": "no",
        "user_message": "no",
    }
    start = cursor.decode({**base, "hook_event_name": "sessionStart"})
    assert cursor.encode(start, Answer(context="c")) == {"additional_context": "c"}
    assert cursor.encode(start, Answer()) == {}


def test_qwen_speaks_claude_codes_shape_with_its_own_tool_names():
    base = {"session_id": "q1", "cwd": "/p", "transcript_path": "/elsewhere/q1.jsonl"}
    edit = {"file_path": "/p/a.py", "old_string": "x", "new_string": "y", "replace_all": True}
    event = qwen.decode({**base, "hook_event_name": "PreToolUse", "tool_name": "edit", "tool_input": edit})
    assert event.changes[0].after("x x", 100) == "y y"
    write = {"file_path": "/p/w.py", "content": "c"}
    event = qwen.decode({**base, "hook_event_name": "PreToolUse", "tool_name": "write_file", "tool_input": write})
    assert event.changes[0].after("", 100) == "c"
    assert qwen.decode({**base, "hook_event_name": "Stop"}).asked() is None, "no transcript of Claude Code's read"
    assert qwen.encode(event, Answer(deny="no")) == claude_code.encode(event, Answer(deny="no"))


def test_qwen_reports_the_file_before_its_own_tools_in_gemini_clis_shape():
    """As the real Qwen Code sends it (tests/fixtures/agents/qwen-code-hooks.jsonl): PostToolUse of
    `edit` with `returnDisplay.originalContent`; null for a file write_file creates."""
    base = {"session_id": "q1", "cwd": "/p", "hook_event_name": "PostToolUse"}
    edit = {"file_path": "/p/a.py", "old_string": "x = 1", "new_string": "x = 2"}
    display = {"fileName": "a.py", "originalContent": "x = 1\n", "newContent": "x = 2\n"}
    event = qwen.decode({**base, "tool_name": "edit", "tool_input": edit, "tool_response": {"returnDisplay": display}})
    assert event.changes[0].reported == Reported("x = 1\n", "the file as Qwen Code reported it")
    write = {"file_path": "/p/n.py", "content": "n\n"}
    created = {"returnDisplay": {"originalContent": None, "newContent": "n\n"}}
    event = qwen.decode({**base, "tool_name": "write_file", "tool_input": write, "tool_response": created})
    assert event.changes[0].reported == Reported(None, "the file not existing before")
    odd = {"returnDisplay": {"originalContent": ["not", "text"]}}
    assert (
        qwen.decode({**base, "tool_name": "edit", "tool_input": edit, "tool_response": odd}).changes[0].reported is None
    )


def test_request_changes_in_each_agents_shape():
    end = Answer(block="go on: fix it")
    stop = codex.decode(codex_event("Stop", stop_hook_active=True))
    assert stop.continuing and codex.encode(stop, end) == {"decision": "block", "reason": "go on: fix it"}
    after = gemini.decode(gemini_event("AfterAgent", stop_hook_active=False))
    assert not after.continuing and gemini.encode(after, end) == {"decision": "deny", "reason": "go on: fix it"}
    cur = cursor.decode({"conversation_id": "k", "hook_event_name": "stop", "status": "completed", "loop_count": 1})
    assert cur.continuing and cursor.encode(cur, end) == {"followup_message": "go on: fix it"}
    claude = claude_code.decode({"session_id": "s", "hook_event_name": "Stop", "stop_hook_active": False})
    assert claude_code.encode(claude, Answer(block="b", notice="n")) == {
        "decision": "block",
        "reason": "b",
        "systemMessage": "n",
    }
