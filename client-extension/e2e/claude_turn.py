"""Plays one turn of Claude Code with Stet's hooks, as Claude Code runs them: for each file, the
PreToolUse hook, the write itself, the PostToolUse hook; then the Stop hook (which captures the turn).

Usage: python claude_turn.py WORKSPACE SESSION WRITES_JSON STET_CMD...
WRITES_JSON: a list of {"path": relative path, "text": the file's new text}. Prints the Stop hook's answer.
"""
import json
import subprocess
import sys
from pathlib import Path


def hook(cmd, root, session, event, payload):
    body = {"session_id": session, "transcript_path": "/dev/null", "cwd": str(root), "hook_event_name": event,
            "permission_mode": "default", **payload}
    p = subprocess.run([*cmd, "hook", "claude-code"], input=json.dumps(body), capture_output=True, text=True, cwd=root)
    if p.returncode != 0:
        raise SystemExit(f"{event} hook failed ({p.returncode}): {p.stderr}")
    return p.stdout


def main():
    root = Path(sys.argv[1]).resolve()
    session = sys.argv[2]
    writes = json.loads(sys.argv[3])
    cmd = sys.argv[4:]
    for w in writes:
        full = root / w["path"]
        data = {"tool_name": "Write", "tool_input": {"file_path": str(full), "content": w["text"]}}
        hook(cmd, root, session, "PreToolUse", data)
        full.write_text(w["text"])
        hook(cmd, root, session, "PostToolUse", {**data, "tool_response": {"filePath": str(full), "success": True}})
    print(hook(cmd, root, session, "Stop", {"stop_hook_active": False}).strip())


if __name__ == "__main__":
    main()
