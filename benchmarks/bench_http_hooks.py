"""Benchmark 11: Claude Code's HTTP hooks (`stet integrate claude-code --http`), answered by a
running `stet mcp --http` on a store with 1,000 hunks in 100 files (some rejected with
feedback, so the PreToolUse check has rejected changes to compare with).

Timed from the client, request sent to answer read, as Claude Code posts them: one
`PreToolUse` on an Edit of a file of the workspace (the allowed path: the review brought up to
date with the store, the edit checked against the file's rejected hunks, the file's baseline
recorded), one `PreToolUse` that redoes a rejected change (the deny path), and one
`UserPromptSubmit` with nothing new to tell. Each on a kept-alive connection and on a new
connection per request (what an HTTP client that does not pool pays). The floor, interleaved:
the same server's answer to a request without the token (401, answered before anything is
read), on a kept-alive connection.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from common import PY, compile_server, fresh_dir, make_files, remove, save_json, summary
from workload import write_file

SESSION = "0b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9"
_SCRIPT = Path(PY).parent / "stet"
STET = [str(_SCRIPT)] if _SCRIPT.exists() else [PY, "-m", "stet"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _checked(argv: list[str], cwd: Path, stdin: bytes | None = None) -> bytes:
    p = subprocess.run(argv, cwd=cwd, input=stdin, capture_output=True)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: exit {p.returncode}: {p.stderr.decode()[-500:]}")
    return p.stdout


def _store(root: Path) -> list[tuple[Path, str, str]]:
    """1,000 pending hunks in 100 files, proposed in one patch; in every tenth file the first hunk
    that changes lines rejected."""
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    files = make_files(root, 100)
    patch = []
    for path, _base, new in files:
        rel = str(path.relative_to(root))
        other = root / "new.tmp"
        write_file(other, new)
        diff = subprocess.run(
            ["git", "diff", "--no-index", "--no-color", rel, "new.tmp"], cwd=root, capture_output=True
        ).stdout.decode()
        patch.append(diff.replace("b/new.tmp", f"b/{rel}"))
        other.unlink()
    _checked(
        STET + ["propose", "--patch", "-", "--id", "seed", "--task", f"claude-{SESSION}"], root, "".join(patch).encode()
    )
    hunks = json.loads(_checked(STET + ["status", "--json"], root))["hunks"]
    assert len(hunks) == 1000, len(hunks)
    first = {}
    for h in sorted(hunks, key=lambda h: h["range"]["start"]["line"]):
        if h["oldText"].strip():  # (an Edit replaces text: a change of lines, not an insertion)
            first.setdefault(h["uri"], h)
    rejected = [h for i, h in enumerate(sorted(first.values(), key=lambda h: h["uri"])) if i % 10 == 0]
    for h in rejected:
        _checked(STET + ["reject", h["id"], "--feedback", "not this way: keep the original"], root)
    return [(Path(h["uri"].removeprefix("file://")), h["oldText"], h["newText"]) for h in rejected]


def _post(conn: http.client.HTTPConnection, body: bytes, token: str | None) -> tuple[float, int, bytes]:
    headers = {"Content-Type": "application/json"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    t0 = time.perf_counter()
    conn.request("POST", "/hooks/claude-code", body=body, headers=headers)
    r = conn.getresponse()
    data = r.read()
    return time.perf_counter() - t0, r.status, data


def _payload(root: Path, event: str, **fields: object) -> bytes:
    body = {
        "session_id": SESSION,
        "transcript_path": str(root / "transcript.jsonl"),
        "cwd": str(root),
        "permission_mode": "default",
        "hook_event_name": event,
        **fields,
    }
    return json.dumps(body).encode()


def _edit(root: Path, path: Path, old: str, new: str, n: int) -> bytes:
    tool_input = {"file_path": str(path), "old_string": old, "new_string": new, "replace_all": False}
    return _payload(root, "PreToolUse", tool_name="Edit", tool_input=tool_input, tool_use_id=f"toolu_{n:024d}")


def main(rounds: int) -> dict:
    root = fresh_dir("http-hooks")
    server = None
    try:
        rejected = _store(root)
        port = _free_port()
        env = {k: v for k, v in os.environ.items() if k not in ("STET_DB", "STET_FAULT")}
        server = subprocess.Popen(
            STET + ["mcp", "--http", f"127.0.0.1:{port}"], cwd=root, env=env, stderr=subprocess.DEVNULL
        )
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("stet mcp --http did not start") from None
                time.sleep(0.05)
        token = (root / ".stet" / "mcp-token").read_text().strip()
        allowed_path, _, _ = rejected[1]
        text = allowed_path.read_text()
        line = next(x for x in text.splitlines(keepends=True) if x.strip())
        deny_path, deny_old, deny_new = rejected[0]
        keep = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        samples: dict[str, list[float]] = {k: [] for k in ("floor", "allow", "deny", "prompt", "allow_new_conn")}
        for r in range(rounds + 5):
            took = {}
            took["floor"], status, _ = _post(keep, b"{}", None)
            assert status == 401, status
            took["allow"], status, data = _post(keep, _edit(root, allowed_path, line, line.upper(), r), token)
            assert status == 200 and data == b"", (status, data)
            took["deny"], status, data = _post(keep, _edit(root, deny_path, deny_old, deny_new, r), token)
            assert status == 200 and b'"deny"' in data, (status, data)
            took["prompt"], status, data = _post(keep, _payload(root, "UserPromptSubmit", prompt="go on"), token)
            assert status == 200, (status, data)
            fresh = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            took["allow_new_conn"], status, _ = _post(fresh, _edit(root, allowed_path, line, line.upper(), r), token)
            fresh.close()
            if r < 5:
                continue  # warm: the first hooks start the task and record the baseline
            for k, v in took.items():
                samples[k].append(v)
        keep.close()
        out = {k: summary(v) for k, v in samples.items()}
        out["hunks"], out["rounds"] = 1000, rounds
        out["goal_ms"] = 10.0
        return out
    finally:
        if server is not None:
            server.send_signal(signal.SIGTERM)
            server.wait(30)
        remove(root)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=200)
    args = ap.parse_args()
    compile_server()
    result = main(args.rounds)
    save_json("http_hooks", result)
    print(json.dumps(result, indent=1))
    sys.exit(0)
