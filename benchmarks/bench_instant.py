"""Benchmark 12: the instant path. Every command and hook an agent runs often,
process start to exit, against `python -c pass` of the same interpreter, interleaved in one
run, on a store of 1,000 pending hunks in 100 files:

- `stet mcp` until it answers `initialize` (not a resident call: the same in both modes; goal 3x);
- `stet status`, `status --json`, `show ID`, `accept ID`, `reject ID` (each undone after, not
  timed), `propose` of a one-line patch (a new proposal each run);
- each agent's hook (claude-code, codex, gemini, copilot, cursor, qwen) with the JSON it sends:
  before an edit (what an agent runs most; Claude Code's after an edit too), and at the end of a
  turn that changed one line (the capture; the turn's other hooks are not timed);
- each as users run it (the thin client hands it to the workspace's resident process, started
  by the first call) and in its own process (STET_RESIDENT=off, the path before the resident),
  wall time and CPU time (the client's and the resident's for the call);
- on SQLite, and on PostgreSQL when --pg URL (or STET_TEST_PG) names a server: the shared
  store's ratio to SQLite's is the goal's second figure (<= 1.5x).

`--vs TREE` measures another checkout against this one, the two interleaved round by round
(an A/B: "nothing slower"); a tree whose `stet hook` knows fewer agents is measured on those it
knows. Run it with PYTHONDONTWRITEBYTECODE unset (Stet's modules are byte-compiled first, as an
installed Stet's are), and with this tree's server/ on PYTHONPATH unless this tree is installed.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
import uuid
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from common import PY, compile_server, fresh_dir, make_files, median, remove, save_json, summary
from workload import write_file

_SCRIPT = Path(PY).parent / "stet"
STET = [str(_SCRIPT)] if _SCRIPT.exists() else [PY, "-m", "stet"]
GOAL = 2.0  # each call through the resident: at most this many times `python -c pass`
MCP_GOAL = 3.0  # `stet mcp` until it answers `initialize`
MODES = {"resident": {}, "own process": {"STET_RESIDENT": "off"}}


def resident_cpu(root: Path) -> float:
    """CPU seconds the workspace's resident has used so far (all its threads, from the kernel's
    nanosecond counts); 0 when there is none."""
    try:
        pid = int((root / ".stet" / "resident.pid").read_text().split()[0])
        total = 0
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/schedstat") as f:
                total += int(f.read().split()[0])
        return total / 1e9
    except (OSError, ValueError, IndexError):
        return 0.0


def children_cpu() -> float:
    u = resource.getrusage(resource.RUSAGE_CHILDREN)
    return u.ru_utime + u.ru_stime


def timed(argv: list[str], cwd: Path, env: dict, stdin: bytes | None = None) -> tuple[float, float, bytes]:
    """A command's wall time, its CPU time (its own process's, and the resident's for the call:
    on a busy machine the steadier figure) and its output."""
    c0, r0 = children_cpu(), resident_cpu(cwd)
    t0 = time.perf_counter()
    p = subprocess.run(argv, cwd=cwd, input=stdin, capture_output=True, env=env)
    took = time.perf_counter() - t0
    cpu = children_cpu() - c0 + resident_cpu(cwd) - r0
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: exit {p.returncode}: {p.stderr.decode()[-800:]}")
    return took, cpu, p.stdout


def run(argv: list[str], cwd: Path, env: dict, stdin: bytes | None = None) -> tuple[float, bytes]:
    took, _cpu, out = timed(argv, cwd, env, stdin)
    return took, out


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


AGENTS = ("claude-code", "codex", "gemini", "copilot", "cursor", "qwen")
# Each agent's names for its hook's three moments in a turn: before an edit, after it, the end of the turn.
EVENTS = {
    "claude-code": ("PreToolUse", "PostToolUse", "Stop"),
    "codex": ("PreToolUse", "PostToolUse", "Stop"),
    "gemini": ("BeforeTool", "AfterTool", "AfterAgent"),
    "copilot": ("preToolUse", "postToolUse", "agentStop"),
    "cursor": ("preToolUse", "afterFileEdit", "stop"),
    "qwen": ("PreToolUse", "PostToolUse", "Stop"),
}
BEFORE, AFTER, END = 0, 1, 2
TOOLS = {"claude-code": "Edit", "codex": "apply_patch", "gemini": "replace", "qwen": "edit"}


def agent_event(
    agent: str, step: int, root: Path, file: Path, old: str, new: str, session: str, turn: str = "t"
) -> tuple[list[str], bytes]:
    """The extra words of `stet hook AGENT` and the JSON the agent sends at one moment of a turn
    (an edit of `file` from `old` to `new`), as each agent's own tests play it."""
    event = EVENTS[agent][step]
    rel = str(file.relative_to(root))
    edit = {"file_path": str(file), "old_string": old, "new_string": new}
    if agent == "copilot":
        body: dict = {"sessionId": session, "timestamp": 1765051200000, "cwd": str(root)}
        args = json.dumps({"path": str(file), "old_str": old, "new_str": new})
        if step == BEFORE:
            body |= {"toolName": "edit", "toolArgs": args}
        elif step == AFTER:
            result = {"resultType": "success", "textResultForLlm": f"File {rel} updated"}
            body |= {"toolName": "edit", "toolArgs": args, "toolResult": result}
        else:
            body["stopReason"] = "end_turn"
        return ["--event", event], json.dumps(body).encode()
    if agent == "cursor":
        body = {
            "conversation_id": session,
            "generation_id": turn,
            "hook_event_name": event,
            "workspace_roots": [str(root)],
        }
        if step == BEFORE:
            body |= {"tool_name": "Write", "tool_input": edit, "tool_use_id": "t1"}
        elif step == AFTER:
            body |= {"file_path": str(file), "edits": [{"old_string": old, "new_string": new}]}
        else:
            body |= {"status": "completed", "loop_count": 0}
        return [], json.dumps(body).encode()
    body = {"session_id": session, "cwd": str(root), "hook_event_name": event}
    if agent == "claude-code":
        body |= {"transcript_path": str(root / "transcript.jsonl"), "permission_mode": "default"}
    if agent == "codex":
        body |= {"turn_id": turn, "model": "gpt-5-codex", "permission_mode": "default"}
    if step == END:
        body["stop_hook_active"] = False
        if agent == "codex":
            body["last_assistant_message"] = "done"
        if agent == "gemini":
            body |= {"prompt": "", "prompt_response": "done"}
        return [], json.dumps(body).encode()
    tool_input: dict = edit
    if agent == "codex":
        tool_input = {"command": f"*** Begin Patch\n*** Update File: {rel}\n@@\n-{old}\n+{new}\n*** End Patch\n"}
    body |= {"tool_name": TOOLS[agent], "tool_input": tool_input, "tool_use_id": "toolu_bench"}
    if step == AFTER:
        body["tool_response"] = {
            "claude-code": {"filePath": str(file), "success": True},
            "codex": f"Success. Updated the following files:\nM {rel}\n",
            "gemini": {"llmContent": f"Successfully modified file: {file}", "returnDisplay": {"fileName": file.name}},
            "qwen": {},
        }[agent]
    return [], json.dumps(body).encode()


def supported(root: Path, env: dict) -> list[str]:
    """The agents the measured tree's `stet hook` knows (an older tree knows only Claude Code)."""
    shown = subprocess.run(STET + ["hook", "--help"], cwd=root, env=env, capture_output=True).stdout.decode()
    return [a for a in AGENTS if a in shown]


def turn_file(root: Path, agent: str) -> Path:
    return root / f"turn-{agent}.txt"


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


def agent_turn(agent: str, root: Path, env: dict, r: int) -> tuple[float, float]:
    """A small turn of `agent`: one line of its file edited between its before- and after-edit
    hooks (not timed), then the end-of-turn hook that captures it (timed); the captured hunk is
    accepted after (not timed), so each round's turn is the same size."""
    f = turn_file(root, agent)
    old = f.read_text().splitlines()[1]
    new = f"two {agent} {r} {uuid.uuid4().hex[:8]}"
    session, turn = f"bench-turn-{agent}", f"turn-{r}"
    extra, body = agent_event(agent, BEFORE, root, f, old, new, session, turn)
    out = run(STET + ["hook", agent, *extra], root, env, body)[1]
    if out.strip() and b"deny" in out:
        raise RuntimeError(f"{agent}: the edit was denied: {out[:300]!r}")
    write_file(f, f.read_text().replace(old, new, 1))
    extra, body = agent_event(agent, AFTER, root, f, old, new, session, turn)
    run(STET + ["hook", agent, *extra], root, env, body)
    extra, body = agent_event(agent, END, root, f, old, new, session, turn)
    took, cpu, _ = timed(STET + ["hook", agent, *extra], root, env, body)
    captured = json.loads(run(STET + ["status", "--json", "--file", str(f.relative_to(root))], root, env)[1])
    ids = [h["id"] for h in captured["hunks"] if h.get("status", "pending") == "pending"]
    if not ids:
        raise RuntimeError(f"{agent}: the end of the turn captured nothing in {f.name}")
    run(STET + ["accept", *ids], root, env)
    return took, cpu


def one_round(
    root: Path, env: dict, ids: list[str], files: list[Path], r: int, has_show: bool, agents: list[str]
) -> dict[str, tuple[float, float]]:
    """Each call's (wall, cpu) seconds."""
    hid = ids[r % len(ids)]
    t: dict[str, tuple[float, float]] = {}

    def time_it(name: str, argv: list[str], stdin: bytes | None = None) -> None:
        took, cpu, _ = timed(argv, root, env, stdin)
        t[name] = (took, cpu)

    time_it("status", STET + ["status"])
    time_it("status --json", STET + ["status", "--json"])
    if has_show:
        time_it("show ID", STET + ["show", hid])
    time_it("accept ID", STET + ["accept", hid])
    run(STET + ["undo", hid], root, env)
    time_it("reject ID", STET + ["reject", hid, "--feedback", "not this"])
    run(STET + ["undo", hid], root, env)
    line = f"small-{uuid.uuid4().hex}"
    patch = f"--- a/small.txt\n+++ b/small.txt\n@@ -1 +1 @@\n-small\n+{line}\n"
    time_it("propose (1 line)", STET + ["propose", "--patch", "-"], patch.encode())
    f = files[r % len(files)]
    for agent in agents:  # the hook each agent runs most: before each edit, on a file with ten hunks
        extra, body = agent_event(agent, BEFORE, root, f, "x", "y", "bench-session")
        time_it(f"hook {agent} (before an edit)", STET + ["hook", agent, *extra], body)
        if agent == "claude-code":
            extra, body = agent_event(agent, AFTER, root, f, "x", "y", "bench-session")
            time_it(f"hook {agent} (after an edit)", STET + ["hook", agent, *extra], body)
    for agent in agents:
        t[f"hook {agent} (end of a 1-line turn)"] = agent_turn(agent, root, env, r)
    # (its CPU time is not the wait's: `stet mcp` goes on loading after its answer)
    t["mcp initialize"] = (mcp_initialize(root, env), float("nan"))
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


def prepare(root: Path, env: dict) -> tuple[list[str], list[Path], bool, list[str]]:
    """The workspace of one tree: its hunks, its files, whether it has `show`, the agents it knows."""
    ids, files = setup(root, {**env, "STET_RESIDENT": "off"})
    write_file(root / "small.txt", "small\n")
    for agent in AGENTS:
        write_file(turn_file(root, agent), "one\ntwo\nthree\n")
    subprocess.run(["git", "add", "-A"], cwd=root, check=True, capture_output=True)
    subprocess.run(["git", "-c", "user.email=b@b", "-c", "user.name=b", "commit", "-qm", "base"], cwd=root, check=True)
    has_show = subprocess.run(STET + ["show", "--help"], cwd=root, env=env, capture_output=True).returncode == 0
    return ids, files, has_show, supported(root, env)


def summarize(pairs: list[tuple[float, float]]) -> dict:
    """Wall time's summary, with the median CPU time beside it (ms)."""
    cpu = [c for _, c in pairs]
    return {**summary([w for w, _ in pairs]), "cpu": None if any(c != c for c in cpu) else median(cpu) * 1000}


def engine(rounds: int, pg: str | None, trees: dict[str, str | None], modes: dict[str, dict]) -> dict[str, dict]:
    """Each tree (a label and the PYTHONPATH that selects its `stet`; None: this one) measured in
    its own workspace, the trees and modes interleaved in every round, each call beside a
    `python -c pass` timed just before it."""
    base_env = {k: v for k, v in os.environ.items() if not k.startswith("STET_")}
    envs: dict[str, dict] = {}
    for label, path in trees.items():
        env = dict(base_env)
        if path:
            env["PYTHONPATH"] = path
        envs[label] = env
    roots = {label: fresh_dir("instant-pg" if pg else "instant") for label in trees}
    dbs: dict[str, str] = {}
    try:
        for label in trees:
            if pg:
                dbs[label] = fresh_database(pg)
                envs[label] |= {"STET_DB": dbs[label], "STET_REPOSITORY": f"bench-{uuid.uuid4().hex[:10]}"}
        ready = {label: prepare(roots[label], envs[label]) for label in trees}
        samples: dict[str, dict[str, dict[str, list[tuple[float, float]]]]] = {
            label: {m: {} for m in modes} for label in trees
        }
        floor: dict[str, list[tuple[float, float]]] = {label: [] for label in trees}
        load = [os.getloadavg()[0]]  # the machine's 1-minute load: was it shared?
        for r in range(rounds + 2):
            for label in trees:
                ids, files, has_show, agents = ready[label]
                for mode, extra in modes.items():
                    took, cpu, _ = timed([PY, "-c", "pass"], roots[label], base_env)
                    got = one_round(roots[label], {**envs[label], **extra}, ids, files, r, has_show, agents)
                    if r >= 2:  # the first rounds warm the file cache and start the resident
                        floor[label].append((took, cpu))
                        for k, v in got.items():
                            samples[label][mode].setdefault(k, []).append(v)
        load.append(os.getloadavg()[0])
        return {
            label: {
                "load": load,
                "cores": os.cpu_count(),
                "python_pass": summarize(floor[label]),
                **{m: {k: summarize(v) for k, v in got.items()} for m, got in samples[label].items()},
            }
            for label in trees
        }
    finally:
        for label in trees:
            subprocess.run(STET + ["resident", "--stop"], cwd=roots[label], env=envs[label], capture_output=True)
            remove(roots[label])
            if pg and label in dbs:
                drop_database(pg, dbs[label])  # WITH (FORCE): a resident still stopping is disconnected


def goal_of(cmd: str) -> float:
    return MCP_GOAL if cmd == "mcp initialize" else GOAL


def main(rounds: int, pg: str | None, modes: dict[str, dict] | None = None) -> dict:
    compile_server()
    modes = modes or MODES
    out = {"sqlite": engine(rounds, None, {"this": None}, modes)["this"]}
    if pg:
        out["postgresql"] = engine(rounds, pg, {"this": None}, modes)["this"]
    for name, res in out.items():
        floor = res["python_pass"]["median"]
        fcpu = res["python_pass"]["cpu"]
        print(f"[{name}] python -c pass median {floor:.1f} ms (cpu {fcpu:.1f} ms)")
        first = next(iter(modes))
        for cmd in res[first]:
            a = res[first][cmd]
            goal = goal_of(cmd)
            verdict = f"within {goal:g}x" if a["median"] / floor <= goal else f"OVER {goal:g}x"
            line = f"  {cmd:<40} {first} {a['median']:7.1f} ms ({a['median'] / floor:4.2f}x, {verdict}"
            line += f"; cpu {a['cpu']:6.1f} ms, {a['cpu'] / fcpu:4.2f}x)" if a["cpu"] is not None else ")"
            for other in list(modes)[1:]:
                b = res[other][cmd]["median"]
                line += f"   {other} {b:7.1f} ms ({b / floor:5.2f}x)"
            if name == "postgresql":
                s = out["sqlite"][first][cmd]["median"]
                line += f"   vs SQLite {a['median'] / s:4.2f}x"
            print(line)
    return out


def versus(rounds: int, other: str, modes: dict[str, dict]) -> dict:
    """This tree against `other` (a checkout's root, or its server/ folder), interleaved round by
    round on the same machine: each call's median, wall and CPU, before and after."""
    server = other if os.path.isdir(os.path.join(other, "stet")) else os.path.join(other, "server")
    kept = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = server  # compile_server compiles the other tree too
    compile_server()
    if kept is None:
        del os.environ["PYTHONPATH"]
    else:
        os.environ["PYTHONPATH"] = kept
    this = str(Path(__file__).resolve().parent.parent / "server")
    got = engine(rounds, None, {"before": server, "after": this}, modes)
    for mode in modes:
        b, a = got["before"], got["after"]
        print(f"[{mode}] before: {server}   after: {this}")
        print(
            f"  {'python -c pass':<38} before {b['python_pass']['median']:7.1f} ms   after {a['python_pass']['median']:7.1f} ms"
        )
        for cmd in a[mode]:
            if cmd not in b[mode]:
                floor = a["python_pass"]["median"]
                print(
                    f"  {cmd:<40} {'(new)':>17}   after {a[mode][cmd]['median']:7.1f} ms ({a[mode][cmd]['median'] / floor:4.2f}x)"
                )
                continue
            x, y = b[mode][cmd], a[mode][cmd]
            print(
                f"  {cmd:<40} before {x['median']:7.1f} ms   after {y['median']:7.1f} ms   ratio {y['median'] / x['median']:4.2f}"
                + (
                    f"   cpu {x['cpu']:6.1f} -> {y['cpu']:6.1f} ms ({y['cpu'] / x['cpu']:4.2f})"
                    if x["cpu"] is not None and y["cpu"] is not None
                    else ""
                )
            )
    return got


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--pg", default=os.environ.get("STET_TEST_PG"), help="a PostgreSQL URL (default: STET_TEST_PG)")
    ap.add_argument("--save", action="store_true", help="write docs/benchmarks/instant.json (what report.py reads)")
    ap.add_argument(
        "--vs",
        metavar="TREE",
        help="A/B: measure this tree against another checkout (its root or server/ folder), interleaved (SQLite)",
    )
    ap.add_argument("--resident-only", action="store_true", help="skip the own-process mode (STET_RESIDENT=off)")
    args = ap.parse_args()
    modes = {"resident": {}} if args.resident_only else MODES
    if args.vs:
        data = versus(args.rounds, args.vs, modes)
        if args.save:
            save_json("instant_vs", data)
    else:
        data = main(args.rounds, args.pg, modes)
        if args.save:
            save_json("instant", data)
    sys.exit(0)
