"""Benchmark: the latency `stet acp` adds to each ACP message between an editor and an agent.

A client (this script, blocking pipes, no event loop of its own) sends small ACP messages round
trip to the fake ACP agent of the tests (tests/support/acp_fake_agent.py), of two kinds: a
`session/prompt` with nothing to do, which the agent answers at once with `end_turn` (Stet's part
reads the review at every prompt: what to tell the agent), and a request Stet's part does not act
on (`session/set_mode`: the kind of every other message of a session, which it only looks at),
which the agent answers at once. The same rounds go, one after
the other, to three peers started side by side: the agent itself (the baseline, in the same run),
the agent behind `stet acp --no-review` (the relay alone), and behind `stet acp` (the relay with
Stet's part, in a workspace with a store; when the part is not there yet, it is the relay alone
again and the output says so). Each round trip carries two messages through the relay (the
request and its answer): the latency added per message is half the added round trip.

    python benchmarks/bench_acp.py [--rounds 2000]

Goal: under 1 ms added per message (median). Also measured: the start, from the editor starting
the command to the answer of its `initialize` (each peer alone, median of a few starts).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from common import PY, REPO, compile_server, fresh_dir, median, percentile, remove

AGENT = [PY, str(REPO / "tests" / "support" / "acp_fake_agent.py")]
_SCRIPT = Path(PY).parent / "stet"
STET = [str(_SCRIPT)] if _SCRIPT.exists() else [PY, "-m", "stet"]
GOAL_US = 1000.0
WARM = 50
KINDS = ("prompt", "other")


class Peer:
    """One ACP agent as the client sees it: a request written, its answer read, timed."""

    def __init__(self, name: str, argv: list[str], cwd: Path, env: dict[str, str]) -> None:
        self.name = name
        self.proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.fd, self.out = self.proc.stdin.fileno(), self.proc.stdout
        self.next_id = 0
        self.samples: dict[str, list[float]] = {kind: [] for kind in KINDS}

    def ask(self, method: str, params: dict) -> tuple[float, dict]:
        self.next_id += 1
        line = json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}).encode() + b"\n"
        t0 = time.perf_counter()
        os.write(self.fd, line)
        while True:
            got = self.out.readline()
            if not got:
                raise RuntimeError(f"{self.name}: the agent's output ended")
            msg = json.loads(got)
            if msg.get("id") == self.next_id and "method" not in msg:
                return time.perf_counter() - t0, msg

    def start(self, cwd: Path) -> str:
        _, init = self.ask("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        assert "result" in init, (self.name, init)
        _, new = self.ask("session/new", {"cwd": str(cwd), "mcpServers": []})
        return str(new["result"]["sessionId"])

    def stop(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def _starts(argvs: dict[str, list[str]], cwd: Path, env: dict[str, str], times: int = 7) -> dict[str, float]:
    """Milliseconds from starting each command to the answer of its initialize, median of `times`
    (one at a time: the peers do not compete for the cores)."""
    took: dict[str, list[float]] = {name: [] for name in argvs}
    for _ in range(times):
        for name, argv in argvs.items():
            t0 = time.perf_counter()
            peer = Peer(name, argv, cwd, env)
            peer.ask("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
            took[name].append(time.perf_counter() - t0)
            peer.stop()
    return {name: median(v) * 1000 for name, v in took.items()}


def _stet(*args: str, cwd: Path, env: dict[str, str]) -> None:
    subprocess.run([*STET, *args], cwd=cwd, env=env, check=True, capture_output=True)


def main(rounds: int) -> dict:
    root = fresh_dir("acp")
    env = {k: v for k, v in os.environ.items() if k not in ("STET_DB", "STET_FAULT")}
    peers: list[Peer] = []
    try:
        subprocess.run(["git", "init", "-q"], cwd=root, check=True)
        _stet("init", cwd=root, env=env)
        review = importlib.util.find_spec("stet.acp.review_part") is not None
        argvs = {
            "direct": AGENT,
            "stet acp --no-review": [*STET, "acp", "--no-review", "--", *AGENT],
            "stet acp" if review else "stet acp (no review part yet)": [*STET, "acp", "--", *AGENT],
        }
        starts = _starts(argvs, root, env)
        peers = [Peer(name, argv, root, env) for name, argv in argvs.items()]
        sessions = [p.start(root) for p in peers]
        for r in range(WARM + rounds):
            for peer, session in zip(peers, sessions, strict=True):
                took, answer = peer.ask(
                    "session/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": "hi"}]}
                )
                assert answer.get("result") == {"stopReason": "end_turn"}, (peer.name, answer)
                other, answer = peer.ask("session/set_mode", {"sessionId": session, "modeId": "ask"})
                assert "error" in answer or "result" in answer, (peer.name, answer)
                if r >= WARM:
                    peer.samples["prompt"].append(took)
                    peer.samples["other"].append(other)
        out: dict = {"rounds": rounds, "goal_us_per_message": GOAL_US, "review_part": review, "peers": {}}
        for peer in peers:
            out["peers"][peer.name] = {"start_to_initialize_ms": starts[peer.name]}
            for kind in KINDS:
                base, med = median(peers[0].samples[kind]), median(peer.samples[kind])
                out["peers"][peer.name][kind] = {
                    "round_trip_median_us": med * 1e6,
                    "round_trip_p99_us": percentile(peer.samples[kind], 99) * 1e6,
                    "added_per_message_median_us": (med - base) / 2 * 1e6,
                    "ratio": med / base,
                }
        return out
    finally:
        for peer in peers:
            peer.stop()
        remove(root)


def report(out: dict) -> str:
    lines = [
        f"ACP round trips ({out['rounds']} each, interleaved), medians; goal < {out['goal_us_per_message']:.0f} us added per message"
    ]
    for kind, what in (("prompt", "a session/prompt"), ("other", "any other message")):
        lines.append(f" {what}:")
        for name, peer in out["peers"].items():
            s = peer[kind]
            lines.append(
                f"  {name:32} round trip {s['round_trip_median_us']:8.0f} us  p99 {s['round_trip_p99_us']:8.0f} us  "
                f"ratio {s['ratio']:.2f}x  added per message {s['added_per_message_median_us']:7.0f} us"
            )
    lines.append(" start, from the command started to its initialize answered (each alone, median):")
    for name, peer in out["peers"].items():
        lines.append(f"  {name:32} {peer['start_to_initialize_ms']:6.1f} ms")
    return "\n".join(lines)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=2000)
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = ap.parse_args()
    sys.path.insert(0, str(REPO / "server"))
    compile_server()
    result = main(args.rounds)
    print(json.dumps(result, indent=1) if args.json else report(result))
