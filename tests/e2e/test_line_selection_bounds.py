"""A hostile selection of a hunk's lines.

`stet.acceptLines` with 100,000 copies of a 10,000-line range once stalled the server ~27-38 s
(each copy expanded into a set: 10^9 insertions, under the store's write lock). Now a selection
takes at most MAX_RANGES ranges on each side (InvalidParams -32602, CLI exit 2, nothing changed),
and one of that many copies is one pass over the hunk (tests/unit/test_domain_parts.py measures it).
"""

from __future__ import annotations

import time

from stet.domain.parts import MAX_RANGES
from support.clitools import stet, stet_json
from support.harness import rng, write
from support.rawlsp import RawServer

N = 10_000
OLD = "".join(f"line {i}\n" for i in range(N))
NEW = "".join(f"new {i}\n" for i in range(N))


def _one_big_hunk(s: RawServer, f) -> dict:
    edit = {"changes": {f.as_uri(): [{"range": rng(0, 0, N, 0), "newText": NEW}]}}
    (h,) = s.call("stet/propose", {"proposalId": "big", "edit": edit}, timeout=120)["hunks"]
    return h


def _accept_lines(s: RawServer, args: dict, timeout: float = 60) -> dict:
    params = {"command": "stet.acceptLines", "arguments": [args]}
    return s.request("workspace/executeCommand", params, timeout=timeout)


def test_copies_of_a_long_range_are_refused_at_once_and_change_nothing(tmp_path):
    ws = tmp_path / "ws"
    f = write(ws / "a.txt", OLD)
    s = RawServer(ws)
    try:
        s.initialize()
        h = _one_big_hunk(s, f)
        started = time.monotonic()
        # 60 s is generous: refused, it answers at once; expanded, it took 27-38 s on an idle machine
        answer = _accept_lines(s, {"hunkId": h["id"], "old": [[0, N - 1]] * 100_000})
        took = time.monotonic() - started
        assert answer.get("error", {}).get("code") == -32602, answer.get("error") or "accepted"
        assert f"at most {MAX_RANGES} ranges" in answer["error"]["message"]
        assert took < 30, took
        assert s.alive()
        (still,) = s.call("stet/listHunks", {})["hunks"]
        assert still["id"] == h["id"] and still["status"] == "pending"
        assert f.read_text() == OLD
        # As many copies as allowed: a selection like any other (every old line, no new line)
        res = _accept_lines(s, {"hunkId": h["id"], "old": [[0, N - 1]] * MAX_RANGES, "new": [[0, 0]] * MAX_RANGES})
        assert res["result"]["part"]["status"] == "applied", res
        assert f.read_text() == "new 0\n"
    finally:
        s.kill()


def test_the_cli_refuses_too_many_ranges_with_exit_2(tmp_path):
    ws = tmp_path / "ws"
    write(ws / "a.txt", "".join(f"l{i}\n" for i in range(10)))
    diff = "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n-l0\n-l1\n+A\n+B\n"
    (h,) = stet_json("propose", "--patch", "-", cwd=ws, input=diff)["hunks"]
    p = stet("accept", h["id"], "--old", ",".join(["1-2"] * (MAX_RANGES + 1)), cwd=ws)
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert f"at most {MAX_RANGES} ranges" in p.stderr and "Traceback" not in p.stderr
    assert stet_json("show", h["id"], cwd=ws)["hunk"]["status"] == "pending"
    assert (ws / "a.txt").read_text().startswith("l0\nl1\n")
