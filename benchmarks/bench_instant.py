"""Benchmark 12: the instant path. Every command and hook an agent runs often,
process start to exit, against `python -c pass` of the same interpreter, interleaved in one
run, on a store of 1,000 pending hunks in 100 files:

- `stet mcp` until it answers `initialize` (not a resident call: the same in both modes);
- `stet status`, `status --json`, `show ID`, `accept ID`, `reject ID` (each undone after, not
  timed), `propose` of a one-line patch (a new proposal each run), and `stet hook claude-code`
  with Claude Code's PreToolUse and PostToolUse payloads for one file's Edit;
- each as users run it (the thin client hands it to the workspace's resident process, started
  by the first call) and in its own process (STET_RESIDENT=off, the path before the resident);
- on SQLite, and on PostgreSQL when --pg URL (or STET_TEST_PG) names a server: the shared
  store's ratio to SQLite's is the goal's second figure (<= 1.5x).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from common import PY, compile_server, fresh_dir, make_files, remove, save_json, summary
from workload import write_file

_SCRIPT = Path(PY).parent / "stet"
STET = [str(_SCRIPT)] if _SCRIPT.exists() else [PY, "-m", "stet"]
GOAL = 2.0  # each call through the resident: at most this many times `python -c pass`
MODES = {"resident": {}, "own process": {"STET_RESIDENT": "off"}}


def run(argv: list[str], cwd: Path, env: dict, stdin: bytes | None = None) -> tuple[float, bytes]:
    t0 = time.perf_counter()
    p = subprocess.run(argv, cwd=cwd, input=stdin, capture_output=True, env=env)
    took = time.perf_counter() - t0
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: exit {p.returncode}: {p.stderr.decode()[-800:]}")
    return took, p.stdout


def setup(root: Path, env: dict) -> tuple[list[str], list[Path]]:
    """A git repository with 100 files and 1,000 pending hunks (ten per file)."""
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    files = make_files(root, 100)
    for path, _base, new in files:
        a = root / "a.tmp"
        write_file(a, new)
        diff = subprocess.run(
            ["git", "diff", "--no-index", "--no-color", str(path.relative_to(root)), "a.tmp"],
            cwd=root,
            capture_output=True,
        ).stdout.decode()
        rel = str(path.relative_to(root))
        text = diff.replace("b/a.tmp", f"b/{rel}")
        run(STET + ["propose", "--patch", "-", "--id", f"p-{rel}"], root, env, text.encode())
        a.unlink()
    listed = json.loads(run(STET + ["status", "--json"], root, env)[1])
    return [h["id"] for h in listed["hunks"]], [p for p, _, _ in files]


def hook(event: str, root: Path, file: Path) -> bytes:
    payload = {
        "session_id": "bench-session",
        "transcript_path": str(root / "transcript.jsonl"),
        "cwd": str(root),
        "permission_mode": "default",
        "hook_event_name": event,
        "tool_name": "Edit",
        "tool_input": {"file_path": str(file), "old_string": "x", "new_string": "y"},
        "tool_use_id": "toolu_bench",
    }
    if event == "PostToolUse":
        payload["tool_response"] = {"filePath": str(file), "success": True}
    return json.dumps(payload).encode()


def agent_hook(agent: str, root: Path, file: Path) -> bytes:
    """Each other agent's before-edit hook, with the JSON it sends, on the same file."""
    rel = str(file.relative_to(root))
    common = {"session_id": "bench-session", "cwd": str(root)}
    payloads: dict[str, dict] = {
        "codex": {
            **common,
            "hook_event_name": "PreToolUse",
            "turn_id": "t",
            "tool_name": "apply_patch",
            "tool_input": {"command": f"*** Begin Patch\n*** Update File: {rel}\n@@\n-x\n+y\n*** End Patch\n"},
        },
        "gemini": {
            **common,
            "hook_event_name": "BeforeTool",
            "tool_name": "replace",
            "tool_input": {"file_path": str(file), "old_string": "x", "new_string": "y"},
        },
        "copilot": {
            "sessionId": "bench-session",
            "cwd": str(root),
            "toolName": "edit",
            "toolArgs": json.dumps({"path": str(file), "old_str": "x", "new_str": "y"}),
        },
        "cursor": {
            "conversation_id": "bench-session",
            "workspace_roots": [str(root)],
            "hook_event_name": "preToolUse",
            "tool_name": "Write",
            "tool_input": {"file_path": str(file), "old_string": "x", "new_string": "y"},
        },
    }
    return json.dumps(payloads[agent]).encode()


AGENT_HOOKS = {"codex": [], "gemini": [], "copilot": ["--event", "preToolUse"], "cursor": []}


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}},
}


def mcp_initialize(root: Path, env: dict) -> float:
    """`stet mcp` started as an agent starts it, until its answer to `initialize` (what the agent
    waits for before its session's first request); then its stdin is closed and it exits."""
    t0 = time.perf_counter()
    p = subprocess.Popen(
        STET + ["mcp"], cwd=root, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    assert p.stdin is not None and p.stdout is not None
    p.stdin.write(json.dumps(INITIALIZE).encode() + b"\n")
    p.stdin.flush()
    answer = p.stdout.readline()
    took = time.perf_counter() - t0
    p.stdin.close()
    p.wait()
    if b'"result"' not in answer:
        raise RuntimeError(f"stet mcp: no answer to initialize: {answer[:300]!r}")
    return took


def one_round(root: Path, env: dict, ids: list[str], files: list[Path], r: int, has_show: bool) -> dict[str, float]:
    hid = ids[r % len(ids)]
    t = {}
    t["status"], _ = run(STET + ["status"], root, env)
    t["status --json"], _ = run(STET + ["status", "--json"], root, env)
    if has_show:
        t["show ID"], _ = run(STET + ["show", hid], root, env)
    t["accept ID"], _ = run(STET + ["accept", hid], root, env)
    run(STET + ["undo", hid], root, env)
    t["reject ID"], _ = run(STET + ["reject", hid, "--feedback", "not this"], root, env)
    run(STET + ["undo", hid], root, env)
    line = f"small-{uuid.uuid4().hex}"
    patch = f"--- a/small.txt\n+++ b/small.txt\n@@ -1 +1 @@\n-small\n+{line}\n"
    t["propose (1 line)"], _ = run(STET + ["propose", "--patch", "-"], root, env, patch.encode())
    f = files[r % len(files)]
    t["hook PreToolUse"], _ = run(STET + ["hook", "claude-code"], root, env, hook("PreToolUse", root, f))
    t["hook PostToolUse"], _ = run(STET + ["hook", "claude-code"], root, env, hook("PostToolUse", root, f))
    for agent, extra in AGENT_HOOKS.items():  # (qwen's is Claude Code's hook)
        t[f"hook {agent} (before an edit)"], _ = run(
            STET + ["hook", agent, *extra], root, env, agent_hook(agent, root, f)
        )
    t["mcp initialize"] = mcp_initialize(root, env)
    return t


def fresh_database(admin: str) -> str:
    """A database of its own for the run, in the cluster `admin` names (dropped by `drop_database`)."""
    import psycopg

    name = f"stet_bench_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    parts = urlsplit(admin)
    return urlunsplit(parts._replace(path="/" + name))


def drop_database(admin: str, url: str) -> None:
    import psycopg

    name = urlsplit(url).path.lstrip("/")
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def engine(rounds: int, pg: str | None) -> dict:
    root = fresh_dir("instant-pg" if pg else "instant")
    base_env = {k: v for k, v in os.environ.items() if not k.startswith("STET_")}
    db = fresh_database(pg) if pg else None
    if db:
        base_env["STET_DB"] = db
        base_env["STET_REPOSITORY"] = f"bench-{uuid.uuid4().hex[:10]}"
    try:
        ids, files = setup(root, {**base_env, "STET_RESIDENT": "off"})
        write_file(root / "small.txt", "small\n")
        subprocess.run(["git", "add", "-A"], cwd=root, check=True, capture_output=True)
        subprocess.run(
            ["git", "-c", "user.email=b@b", "-c", "user.name=b", "commit", "-qm", "base"], cwd=root, check=True
        )
        has_show = (
            subprocess.run(STET + ["show", "--help"], cwd=root, env=base_env, capture_output=True).returncode == 0
        )
        samples: dict[str, dict[str, list[float]]] = {m: {} for m in MODES}
        floor: list[float] = []
        for r in range(rounds + 2):
            t_floor, _ = run([PY, "-c", "pass"], root, base_env)
            for mode, extra in MODES.items():
                got = one_round(root, {**base_env, **extra}, ids, files, r, has_show)
                if r >= 2:  # the first rounds warm the file cache and start the resident
                    for k, v in got.items():
                        samples[mode].setdefault(k, []).append(v)
            if r >= 2:
                floor.append(t_floor)
        subprocess.run(STET + ["resident", "--stop"], cwd=root, env=base_env, capture_output=True)
        return {"python_pass": summary(floor), **{m: {k: summary(v) for k, v in s.items()} for m, s in samples.items()}}
    finally:
        subprocess.run(STET + ["resident", "--stop"], cwd=root, env=base_env, capture_output=True)
        remove(root)
        if pg and db:
            drop_database(pg, db)  # WITH (FORCE): a resident still stopping is disconnected


def main(rounds: int, pg: str | None) -> dict:
    compile_server()
    out = {"sqlite": engine(rounds, None)}
    if pg:
        out["postgresql"] = engine(rounds, pg)
    for name, res in out.items():
        floor = res["python_pass"]["median"]
        print(f"[{name}] python -c pass median {floor:.1f} ms")
        for cmd in res["resident"]:
            a, b = res["resident"][cmd]["median"], res["own process"][cmd]["median"]
            goal = "within 2x" if a / floor <= GOAL else "OVER 2x"
            line = f"  {cmd:<18} resident {a:7.1f} ms ({a / floor:4.2f}x, {goal})   own process {b:7.1f} ms ({b / floor:5.2f}x)"
            if name == "postgresql":
                s = out["sqlite"]["resident"][cmd]["median"]
                line += f"   vs SQLite resident {a / s:4.2f}x"
            print(line)
    return out


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--pg", default=os.environ.get("STET_TEST_PG"), help="a PostgreSQL URL (default: STET_TEST_PG)")
    ap.add_argument("--save", action="store_true")
    args = ap.parse_args()
    data = main(args.rounds, args.pg)
    if args.save:
        save_json("instant", data)
    sys.exit(0)
