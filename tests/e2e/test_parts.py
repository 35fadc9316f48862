"""Parts of a hunk (docs/protocol.md) through the real `stet` CLI: show, accept and reject of
some lines, the rest, undo, idempotency and the refusals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support import clitools
from support.clitools import commit_all, git, make_repo, stet, stet_json

BASE = b"".join(b"l%d\n" % i for i in range(1, 11))
# l5..l7 replaced by A..D: one hunk, old [l5, l6, l7], new [A, B, C, D]
EDITED = BASE.replace(b"l5\nl6\nl7\n", b"A\nB\nC\nD\n")


def _lines(data: bytes) -> list[str]:
    return data.decode().splitlines()


@pytest.fixture
def repo(tmp_path, engine):
    root = make_repo(tmp_path / "repo")
    (root / "f.txt").write_bytes(BASE)
    commit_all(root)
    clitools.ENGINE_ENV.clear()
    if engine.pg:
        clitools.ENGINE_ENV["STET_DB"] = engine.db(root)
    yield root
    clitools.ENGINE_ENV.clear()


def _propose(root: Path) -> str:
    (root / "f.txt").write_bytes(EDITED)
    diff = git("diff", cwd=root)
    git("checkout", "-q", "--", ".", cwd=root)
    out = stet_json("propose", "--patch", "-", "--agent", "claude", "-m", "letters", cwd=root, input=diff)
    (hunk,) = out["hunks"]
    return hunk["id"]


def test_show_numbers_the_lines_as_accept_takes_them(repo):
    hid = _propose(repo)
    text = stet("show", hid, cwd=repo).stdout
    assert "-1    l5" in text and "-3    l7" in text and "+1    A" in text and "+4    D" in text
    shown = stet_json("show", hid, cwd=repo)
    assert shown["old"] == ["l5\n", "l6\n", "l7\n"] and shown["new"] == ["A\n", "B\n", "C\n", "D\n"]
    assert shown["hunk"]["id"] == hid and shown["hunk"]["status"] == "pending"


def test_accepting_some_lines_writes_the_part_and_leaves_the_rest(repo):
    hid = _propose(repo)
    out = stet_json("accept", hid, "--old", "1", "--new", "1-2", "--request-id", "r-part", cwd=repo)
    part, rest = out["part"], out["rest"]
    assert part["status"] == "applied" and rest["status"] == "pending"
    # the contract's example: [l5, l6, l7] -> [A, B, C, D], old 1 + new 1-2 -> [l6, l7, A, B]
    assert _lines((repo / "f.txt").read_bytes()) == ["l1", "l2", "l3", "l4", "l6", "l7", "A", "B", "l8", "l9", "l10"]
    for s in (part, rest):
        assert s["proposalId"] and s["message"] == "letters" and s["taskId"] is None
    status = stet_json("status", "--all", cwd=repo)
    original = next(h for h in status["hunks"] if h["id"] == hid)
    assert original["status"] == "superseded" and original["parts"] == [part["id"], rest["id"]]
    # the same request again: the first answer, one split
    again = stet_json("accept", hid, "--old", "1", "--new", "1-2", "--request-id", "r-part", cwd=repo)
    assert again["part"]["id"] == part["id"] and again["rest"]["id"] == rest["id"]
    assert len(stet_json("status", "--all", cwd=repo)["hunks"]) == 3
    # accepting the rest makes the whole proposal; the part, under it, is still in the file
    stet_json("accept", rest["id"], cwd=repo)
    assert (repo / "f.txt").read_bytes() == EDITED
    status = {h["id"]: h for h in stet_json("status", "--all", cwd=repo)["hunks"]}
    assert status[part["id"]]["status"] == status[rest["id"]]["status"] == "applied"
    assert status[part["id"]]["inFile"] is True and status[rest["id"]]["inFile"] is True


def test_rejecting_some_lines_keeps_the_others_pending(repo):
    hid = _propose(repo)
    out = stet_json("reject", hid, "--new", "3-4", "--feedback", "no C or D", cwd=repo)
    part, rest = out["part"], out["rest"]
    assert part["status"] == "rejected" and part["feedback"] == "no C or D"
    assert rest["status"] == "pending"
    assert (repo / "f.txt").read_bytes() == BASE, "a reject writes nothing"
    stet_json("accept", rest["id"], cwd=repo)
    # the complement: l5-l7 removed, A and B added
    assert _lines((repo / "f.txt").read_bytes()) == ["l1", "l2", "l3", "l4", "A", "B", "l8", "l9", "l10"]


def test_undo_of_a_part_puts_it_back_to_pending(repo):
    hid = _propose(repo)
    out = stet_json("accept", hid, "--new", "1", cwd=repo)
    part = out["part"]
    undone = stet_json("undo", part["id"], cwd=repo)
    assert undone["hunks"][0]["status"] == "pending"
    assert (repo / "f.txt").read_bytes() == BASE
    status = {h["id"]: h for h in stet_json("status", "--all", cwd=repo)["hunks"]}
    assert status[hid]["status"] == "superseded", "parts are not merged again"


def test_every_line_selected_decides_the_whole_hunk(repo):
    hid = _propose(repo)
    out = stet_json("accept", hid, "--old", "1-3", "--new", "1-4", cwd=repo)
    assert out["rest"] is None and out["part"]["id"] == hid and out["part"]["status"] == "applied"
    assert (repo / "f.txt").read_bytes() == EDITED


@pytest.mark.parametrize("option", [["--old", "4"], ["--new", "5"], ["--new", "0"], ["--old", "2-1"]])
def test_a_line_outside_the_hunk_is_refused_and_nothing_changes(repo, option):
    hid = _propose(repo)
    before = stet_json("status", "--all", cwd=repo)
    r = stet("accept", hid, *option, cwd=repo)
    assert r.returncode == 2, r.stderr
    assert stet_json("status", "--all", cwd=repo) == before
    assert (repo / "f.txt").read_bytes() == BASE


def test_a_decided_hunk_is_not_split(repo):
    hid = _propose(repo)
    stet_json("reject", hid, cwd=repo)
    r = stet("accept", hid, "--old", "1", cwd=repo)
    assert r.returncode == 1 and "rejected" in r.stderr


def test_the_log_records_the_part_as_a_decision(repo):
    hid = _propose(repo)
    out = stet_json("reject", hid, "--old", "2", "--feedback", "keep l6", cwd=repo)
    ops = stet_json("log", cwd=repo)["ops"]
    last = ops[-1]
    assert last["kind"] == "reject" and last["args"]["hunkIds"] == [out["part"]["id"]]
    assert last["args"]["split"] == {"hunkId": hid, "old": [[1, 1]], "new": [], "restId": out["rest"]["id"]}
    assert json.dumps(last["args"]["feedback"]) == '"keep l6"'
