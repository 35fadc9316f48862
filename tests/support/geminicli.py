"""Plays Gemini CLI for the tests: one session's hook events with the JSON Gemini CLI 0.61 sends
(session_id, transcript_path, cwd, hook_event_name, timestamp; BeforeTool `replace` with an
absolute `file_path`, `old_string`, `new_string`, `instruction`, or `write_file` with `content`;
AfterTool adding `tool_response.returnDisplay` with `originalContent` / `newContent`), to the
hooks `stet integrate gemini` configured in .gemini/settings.json, each a command run by the
shell with the event on stdin; its answer read as Gemini CLI reads it (exit 0: one JSON object,
or nothing)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path


class Gemini:
    def __init__(self, root: Path, session: str):
        self.root, self.session = root, session
        conf = json.loads((root / ".gemini" / "settings.json").read_text())["hooks"]
        self.hooks = {event: [h for e in conf[event] for h in e["hooks"]] for event in conf}

    def run(self, event: str, **fields: object) -> dict:
        (hook,) = self.hooks[event]
        body = {
            "session_id": self.session,
            "transcript_path": str(self.root.parent / f"session-{self.session}.json"),
            "cwd": str(self.root),
            "hook_event_name": event,
            "timestamp": "2026-12-06T20:00:00.000Z",
            **fields,
        }
        p = subprocess.run(
            ["/bin/sh", "-c", hook["command"]], input=json.dumps(body), capture_output=True, text=True, cwd=self.root
        )
        assert p.returncode == 0 and p.stderr == "", (event, p.returncode, p.stderr)
        return json.loads(p.stdout) if p.stdout.strip() else {}

    def start(self) -> dict:
        return self.run("SessionStart", source="startup")

    def prompt(self, text: str) -> dict:
        return self.run("BeforeAgent", prompt=text)

    def replace(self, path: str, old: str, new: str) -> dict:
        """One `replace`: BeforeTool; when allowed, the edit and AfterTool. Returns BeforeTool's answer."""
        full = self.root / path
        tool_input = {"file_path": str(full), "old_string": old, "new_string": new, "instruction": "change it"}
        pre = self.run("BeforeTool", tool_name="replace", tool_input=tool_input)
        if pre:
            return pre
        before = full.read_text()
        full.write_text(before.replace(old, new, 1))
        display = {"fileDiff": "...", "fileName": full.name, "originalContent": before, "newContent": full.read_text()}
        response = {"llmContent": f"Successfully modified file: {full}", "returnDisplay": display}
        post = self.run("AfterTool", tool_name="replace", tool_input=tool_input, tool_response=response)
        assert post == {}
        return {}

    def stop(self) -> dict:
        return self.run("AfterAgent", prompt="", prompt_response="done", stop_hook_active=False)
