"""resident/events.py: the thin client routes a hook by its parsed event, exactly as the command
will read it (json.loads), never by a word somewhere in its input."""

from __future__ import annotations

import json

import pytest

from stet.resident import events

POST = {
    "session_id": "s",
    "hook_event_name": "PostToolUse",
    "tool_name": "Edit",
    "tool_input": {"file_path": "/w/a.py", "old_string": "x", "new_string": "SessionStart"},
    "tool_response": {"originalFile": 'if e == "UserPromptSubmit" or e == "SessionStart":\n'},
}

INPUTS = [
    json.dumps(POST),
    json.dumps({**POST, "hook_event_name": "SessionStart"}),
    json.dumps({"hook_event_name": "UserPromptSubmit", "prompt": "say SessionStart"}),
    # escapes: of the value, of the key; only the parse sees them
    '{"hook_event_name": "Session\\u0053tart"}',
    '{"hook\\u005fevent_name": "UserPromptSubmit"}',
    '{"hook_event_name": "Pre\\u0054oolUse", "x": "SessionStart"}',
    # the last of two keys is the one json.loads keeps
    '{"hook_event_name": "SessionStart", "hook_event_name": "PostToolUse"}',
    '{"hook_event_name": "PostToolUse", "hook_event_name": "SessionStart"}',
    # the name inside nested objects, arrays, keys: not the event
    '{"tool_input": {"hook_event_name": "SessionStart"}, "hook_event_name": "Stop"}',
    '{"a": ["SessionStart", {"hook_event_name": "UserPromptSubmit"}]}',
    '{"SessionStart": "hook_event_name"}',
    # not an event: not an object, not a string, broken, trailing data, whitespace around
    '["SessionStart"]',
    '"SessionStart"',
    '{"hook_event_name": ["SessionStart"]}',
    '{"hook_event_name": "SessionStart"',
    '{"hook_event_name": "SessionStart"} x',
    '{"hook_event_name": "SessionStart"}{}',
    ' \t\r\n{"hook_event_name": "SessionStart"}\n ',
    '\ufeff{"hook_event_name": "SessionStart"}',
    '{"hook_event_name": "SessionStart", "n": NaN, "f": 1e400, "i": -0}',
    '{"hook_event_name": "Session\nStart"}',  # a raw control character: refused (strict)
    "[" * 100_000 + "]" * 100_000,
    "",
]


def _as_json_loads(raw: bytes) -> str | None:
    try:
        value = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    event = value.get("hook_event_name") if isinstance(value, dict) else None
    return event if isinstance(event, str) else None


@pytest.mark.parametrize("text", INPUTS, ids=range(len(INPUTS)))
def test_the_event_is_the_one_json_loads_reads(text):
    raw = text.encode("utf-8")
    assert events.hook_event(raw) == _as_json_loads(raw)
    assert events.told_here(raw) == (_as_json_loads(raw) in events.TOLD_HERE)


def test_a_post_tool_use_naming_the_events_is_not_told_here():
    raw = json.dumps(POST).encode()
    assert b"SessionStart" in raw and b"UserPromptSubmit" in raw
    assert not events.told_here(raw)
    assert events.told_here(json.dumps({**POST, "hook_event_name": "UserPromptSubmit"}).encode())


def test_bytes_that_are_not_utf8_are_no_event():
    assert events.hook_event(b'{"hook_event_name": "SessionStart", "x": "\xff"}') is None


SHELL_COMMANDS = [
    "ls -la",
    "apply_patch <<'EOF'\n*** Begin Patch\n*** End Patch\nEOF\n",
    '  applypatch  <<"EOF"\nx\nEOF',
    "apply_patch_helper <<EOF\nEOF",
    "echo apply_patch <<EOF\nEOF",
    "cat <<'EOF'\nx\nEOF",
    "apply_patch",
    "",
]


@pytest.mark.parametrize("command", SHELL_COMMANDS)
def test_the_thin_client_tells_a_patch_through_codexs_shell_as_the_codec_does(command):
    from stet.agents.codecs import codex

    assert events.through_shell(command) == codex.through_shell(command)


def test_only_codexs_shell_commands_that_are_no_patch_are_nothing_for_stet():
    """The thin client answers those with nothing without loading Stet: exactly what the codec
    answers; any other call, or a malformed one, goes on to the command."""
    pre = {"session_id": "s", "cwd": "/w", "hook_event_name": "PreToolUse", "tool_name": "Bash"}

    def nothing(agent: str = "codex", **fields: object) -> bool:
        return events.nothing_for(agent, json.dumps({**pre, **fields}).encode())

    assert nothing(tool_input={"command": "ls -la"})
    assert nothing(tool_input={"command": "cat <<'EOF'\nx\nEOF"})
    assert not nothing(tool_input={"command": "apply_patch <<'EOF'\n*** Begin Patch\n*** End Patch\nEOF"})
    assert not nothing("claude-code", tool_input={"command": "ls"}), "another agent's Bash: its own codec"
    assert not nothing(tool_name="apply_patch", tool_input={"command": "ls"})
    assert not nothing(hook_event_name="Stop", tool_input={"command": "ls"})
    assert not nothing(session_id="", tool_input={"command": "ls"}), "malformed: the command says so"
    assert not nothing(tool_input={"cmd": "ls"})
    assert not events.nothing_for("codex", b'["Bash"]') and not events.nothing_for("codex", b"\xff Bash")
