"""Plays Codex CLI for the tests: one session's hook events with the JSON Codex 0.169 sends
(session_id, transcript_path, cwd, hook_event_name, model, permission_mode, and turn_id but at
SessionStart; PreToolUse `tool_name: "apply_patch"` with the patch in `tool_input.command`, its
paths relative to cwd; PostToolUse's `tool_response` a plain string), to the hooks `stet
integrate codex` configured in .codex/hooks.json, each a command run by the shell with the event
on stdin; its answer read as Codex reads it (exit 0: one JSON object, or nothing)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path


class Codex:
    """One Codex session working in `root`."""

    def __init__(self, root: Path, session: str):
        self.root, self.session, self.turns = root, session, 0
        conf = json.loads((root / ".codex" / "hooks.json").read_text())["hooks"]
        self.hooks = {event: [h for e in conf[event] for h in e["hooks"]] for event in conf}
        self.matchers = {event: [e.get("matcher") for e in conf[event]] for event in conf}

    def payload(self, event: str, **fields: object) -> dict:
        base: dict[str, object] = {
            "session_id": self.session,
            "transcript_path": str(self.root.parent / f"rollout-{self.session}.jsonl"),
            "cwd": str(self.root),
            "hook_event_name": event,
            "model": "gpt-5-codex",
            "permission_mode": "default",
        }
        if event != "SessionStart":
            base["turn_id"] = f"turn-{self.turns}"
        return {**base, **fields}

    def run(self, event: str, **fields: object) -> dict:
        (hook,) = self.hooks[event]
        body = json.dumps(self.payload(event, **fields))
        p = subprocess.run(
            ["/bin/sh", "-c", hook["command"]], input=body, capture_output=True, text=True, cwd=self.root
        )
        assert p.returncode == 0 and p.stderr == "", (event, p.returncode, p.stderr)
        return json.loads(p.stdout) if p.stdout.strip() else {}

    def start(self) -> dict:
        return self.run("SessionStart", source="startup")

    def prompt(self, text: str) -> dict:
        self.turns += 1
        return self.run("UserPromptSubmit", prompt=text)

    def patch(self, patch: str, apply) -> dict:  # type: ignore[no-untyped-def]
        """One apply_patch call: PreToolUse; when allowed, `apply()` (Codex writing the files) and
        PostToolUse. Returns PreToolUse's answer."""
        call = {"tool_name": "apply_patch", "tool_input": {"command": patch}, "tool_use_id": "call_1"}
        pre = self.run("PreToolUse", **call)
        if pre:
            return pre
        apply()
        post = self.run("PostToolUse", **call, tool_response="Success. Updated the following files:\nM a.py\n")
        assert post == {}
        return {}

    def stop(self) -> dict:
        return self.run("Stop", stop_hook_active=False, last_assistant_message="done")
