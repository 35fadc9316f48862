"""Plays Claude Code for the tests: one session's hook events, with the exact JSON Claude Code
sends (session_id, transcript_path, cwd, permission_mode, hook_event_name and each event's own
fields), to the hooks `stet integrate claude-code` configured in .claude/settings.json - a
`command` hook run by `/bin/sh -c` with the event on stdin, or an `http` hook POSTed with its
headers, `$VAR` filled only for the variables it lists in allowedEnvVars - and its answer read as
Claude Code reads it (exit 0 or a 2xx: one JSON object, or nothing)."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path


class Claude:
    """One Claude Code session working in `root`."""

    def __init__(self, root: Path, session: str, transcript: str | None = None):
        self.root, self.session = root, session
        self.transcript = transcript or str(root.parent / f"{session}.jsonl")
        conf = json.loads((root / ".claude" / "settings.json").read_text())["hooks"]
        self.hooks = {event: [h for e in conf[event] for h in e["hooks"]] for event in conf}
        self.commands = {
            event: [h["command"] for h in hs if h["type"] == "command"] for event, hs in self.hooks.items()
        }
        self.uses = 0

    def payload(self, event: str, **fields: object) -> dict:
        return {
            "session_id": self.session,
            "transcript_path": self.transcript,
            "cwd": str(self.root),
            "permission_mode": "default",
            "hook_event_name": event,
            **fields,
        }

    def run(self, event: str, **fields: object) -> dict:
        """The event through its hook, as Claude Code runs it; an `http` hook for SessionStart is
        not run, as Claude Code does not ("HTTP hooks are not supported for SessionStart")."""
        (hook,) = self.hooks[event]
        if hook["type"] == "http" and event == "SessionStart":
            return {}
        body = json.dumps(self.payload(event, **fields))
        if hook["type"] == "http":
            status, out = post_hook(hook, body)
            assert status == 200, (event, status, out)
        else:
            p = subprocess.run(
                ["/bin/sh", "-c", hook["command"]], input=body, capture_output=True, text=True, cwd=self.root
            )
            assert p.returncode == 0 and p.stderr == "", (event, p.returncode, p.stderr)
            out = p.stdout
        return json.loads(out) if out.strip() else {}

    def start(self, source: str = "startup") -> dict:
        return self.run("SessionStart", source=source, model="claude-sonnet-4-5")

    def prompt(self, text: str) -> dict:
        return self.run("UserPromptSubmit", prompt=text)

    def edit(self, path: str, old: str, new: str) -> dict:
        """One Edit: PreToolUse; when allowed, the edit and PostToolUse. Returns PreToolUse's answer."""
        self.uses += 1
        tool_use_id = f"toolu_01{self.uses:022d}"
        full = self.root / path
        tool_input = {"file_path": str(full), "old_string": old, "new_string": new, "replace_all": False}
        pre = self.run("PreToolUse", tool_name="Edit", tool_input=tool_input, tool_use_id=tool_use_id)
        if pre:
            return pre
        full.write_text(full.read_text().replace(old, new, 1))
        response = {"filePath": str(full), "oldString": old, "newString": new, "userModified": False}
        post = self.run(
            "PostToolUse", tool_name="Edit", tool_input=tool_input, tool_response=response, tool_use_id=tool_use_id
        )
        assert post == {}
        return {}

    def stop(self) -> dict:
        return self.run("Stop", stop_hook_active=False)


def post_hook(hook: dict, body: str | bytes) -> tuple[int, str]:
    """POST an event as Claude Code does for an `http` hook: (status, body)."""
    allowed = set(hook.get("allowedEnvVars", ()))

    def fill(value: str) -> str:
        return re.sub(r"\$\{?(\w+)\}?", lambda m: os.environ.get(m[1], "") if m[1] in allowed else "", value)

    headers = {"content-type": "application/json", **{k: fill(v) for k, v in hook.get("headers", {}).items()}}
    data = body.encode() if isinstance(body, str) else body
    req = urllib.request.Request(hook["url"], data=data, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=hook.get("timeout", 30)) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve_http(root: Path, port: int, env: dict[str, str] | None = None) -> subprocess.Popen:
    """`stet mcp --http 127.0.0.1:PORT` started in `root` (this checkout's code), once it listens."""
    full = {k: v for k, v in os.environ.items() if k not in ("STET_DB", "STET_FAULT")}
    log = root.parent / f"stet-mcp-{port}.log"  # a file, not a pipe nobody reads: it never fills
    with open(log, "w") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "stet", "mcp", "--http", f"127.0.0.1:{port}"],
            cwd=root,
            env={**full, **(env or {})},
            stderr=err,
        )
    deadline = time.monotonic() + 60
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return proc
        except OSError:
            assert proc.poll() is None, log.read_text()
            assert time.monotonic() < deadline, "the HTTP server did not start"
            time.sleep(0.1)


def stop_http(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(30)
