"""Hunks next to lines Stet wrote are found again after a change Stet did not make:
real files, real `stet` processes, on each store engine. The hunks' contexts are taken again
from the text Stet leaves next to them; until then a hunk beside an applied one kept the lines
that one replaced as its context, and a place that resembled them better was taken for it."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from support import clitools
from support.clitools import commit_all, make_repo, stet, stet_json
from support.harness import Session, read, rng, uri, write

# Hypothesis's example (make test-fast): four hunks, two pure insertions near the top, a
# deletion in the middle, a deletion at the end.
BASE = "\nb\na\nc\n\nb\na\n"
PROPOSED = "a\n\na\nb\nc\n"


@pytest.fixture
def repo(tmp_path, engine):
    root = make_repo(tmp_path / "repo")
    clitools.ENGINE_ENV.clear()
    if engine.pg:
        clitools.ENGINE_ENV["STET_DB"] = engine.db(root)
    yield root
    clitools.ENGINE_ENV.clear()


def captured(repo: Path, base: str, proposed: str) -> list[dict]:
    """The agent wrote `proposed` over the committed `base`: its hunks, in the file's order."""
    write(repo / "f.txt", base)
    commit_all(repo)
    write(repo / "f.txt", proposed)
    hunks = stet_json("capture", cwd=repo)["hunks"]
    assert read(repo / "f.txt") == base
    return sorted(hunks, key=lambda h: h["range"]["start"]["line"])


def pending(repo: Path) -> dict[str, int]:
    """Each pending hunk's first line, by id."""
    listed = stet_json("status", cwd=repo)["hunks"]
    return {h["id"]: h["range"]["start"]["line"] for h in listed if h["status"] == "pending"}


def accept(repo: Path, *ids: str) -> list[dict]:
    p = stet("accept", *ids, "--json", cwd=repo)
    assert p.returncode == 0, (p.stdout, p.stderr)
    return json.loads(p.stdout)["hunks"]


def test_the_rest_lands_after_the_middle_hunk_and_a_line_appended(repo):
    hunks = captured(repo, BASE, PROPOSED)
    assert [(h["oldText"], h["newText"]) for h in hunks] == [("", "a\n"), ("", "a\n"), ("a\n", ""), ("\nb\na\n", "")]
    middle = hunks[2]["id"]
    accept(repo, middle)
    before = pending(repo)
    with (repo / "f.txt").open("a") as f:
        f.write("z\n")
    assert pending(repo) == before  # nothing moved: the line went below them all
    rest = [h["id"] for h in hunks if h["id"] != middle]
    assert {h["status"] for h in accept(repo, *rest)} == {"applied"}
    assert read(repo / "f.txt") == PROPOSED + "z\n"


def test_the_rest_lands_after_the_middle_hunk_and_a_line_typed_above(repo):
    # The recorded lines are one off now: only the context can say where each hunk is, and the
    # context of the insertion above the middle hunk is the text Stet left there (it was taken
    # for a place four lines down, where it would have been written without a word).
    hunks = captured(repo, BASE, PROPOSED)
    first, second, middle, last = (h["id"] for h in hunks)
    accept(repo, middle)
    write(repo / "f.txt", "top\n" + read(repo / "f.txt"))
    # The insertion at the very start cannot say whether it goes above the new line: stale.
    assert pending(repo) == {second: 2, last: 4}
    assert {h["status"] for h in accept(repo, second, last)} == {"applied"}
    assert read(repo / "f.txt") == "top\n\na\nb\nc\n"
    assert stet_json("status", cwd=repo)["hunks"][0]["id"] == first


def test_undo_of_the_middle_hunk_then_a_line_typed_above(repo):
    # Undone, the middle hunk's line is back: the neighbours' context follows it again.
    hunks = captured(repo, BASE, PROPOSED)
    _first, second, middle, last = (h["id"] for h in hunks)
    accept(repo, middle)
    p = stet("undo", middle, cwd=repo)
    assert p.returncode == 0, (p.stdout, p.stderr)
    assert read(repo / "f.txt") == BASE
    write(repo / "f.txt", "top\n" + BASE)
    assert pending(repo) == {second: 2, middle: 3, last: 5}
    assert {h["status"] for h in accept(repo, second, middle, last)} == {"applied"}
    assert read(repo / "f.txt") == "top\n\na\nb\nc\n"


def test_an_applied_deletion_of_a_repeated_line_stays_in_the_file(repo):
    # Deleting one of two equal lines: the one left is not the deleted one come back.
    (h,) = captured(repo, "a\na\n", "a\n")
    accept(repo, h["id"])
    assert read(repo / "f.txt") == "a\n"
    write(repo / "f.txt", "a\nsomething else\n")  # changed outside, then back
    stet_json("status", cwd=repo)
    write(repo / "f.txt", "a\n")
    (state,) = stet_json("status", "--all", cwd=repo)["hunks"]
    assert state["status"] == "applied" and state["inFile"] is True
    p = stet("undo", h["id"], cwd=repo)
    assert p.returncode == 0, (p.stdout, p.stderr)
    assert read(repo / "f.txt") == "a\na\n"


def test_kept_hunks_are_where_the_file_shows_them_and_follow_a_line_typed_above(repo):
    # --keep leaves the agent's text in the file: each hunk is anchored there, its context the
    # file's (the first insertion's context was the base's empty line, the second's the base's
    # deleted line: after a line typed above, the first went stale).
    write(repo / "f.txt", BASE)
    commit_all(repo)
    write(repo / "f.txt", PROPOSED)
    hunks = sorted(stet_json("capture", "--keep", cwd=repo)["hunks"], key=lambda h: h["range"]["start"]["line"])
    assert read(repo / "f.txt") == PROPOSED
    assert [h["range"]["start"]["line"] for h in hunks] == [0, 2, 4, 5]
    first, second, middle, last = (h["id"] for h in hunks)
    accept(repo, middle)
    write(repo / "f.txt", "top\n" + PROPOSED)
    assert pending(repo) == {first: 1, second: 3, last: 6}
    assert {h["status"] for h in accept(repo, first, second, last)} == {"applied"}
    assert read(repo / "f.txt") == "top\n" + PROPOSED


@pytest.mark.parametrize("late", [False, 1.0], ids=["didChange at once", "didChange once idle (eglot)"])
async def test_in_an_editor_s_buffer_the_neighbours_take_the_text_it_shows(tmp_path, late):
    # The accept lands in the open buffer (confirmed at once, or, like eglot, by a didChange
    # after the command answered and the edit is found done when tried again); saved and
    # closed, then a line typed above in the file: the rest land where they belong.
    root = tmp_path / "ws"
    write(root / "f.txt", BASE)
    s = Session(root, late_changes=late)
    await s.start()
    try:
        f = uri(root / "f.txt")
        hunks = (await s.propose("p", {f: [(rng(0, 0, 7, 0), PROPOSED)]}))["hunks"]
        first, second, middle, last = (h["id"] for h in sorted(hunks, key=lambda h: h["range"]["start"]["line"]))
        s.open(root / "f.txt")
        await s.command("stet.accept", {"hunkIds": [middle]})
        deadline = time.monotonic() + 30
        while not any(h["id"] == middle and h["inFile"] for h in await s.hunks(status=["applied"])):
            assert time.monotonic() < deadline, await s.hunks()
            await asyncio.sleep(0.05)
        s.save(root / "f.txt")
        s.close(root / "f.txt")
        await s.stop()
    finally:
        if s.client is not None and s.client._server.returncode is None:
            await s.kill()
    assert read(root / "f.txt") == "\nb\nc\n\nb\na\n"
    write(root / "f.txt", "top\n" + read(root / "f.txt"))
    assert pending(root) == {second: 2, last: 4}
    assert {h["status"] for h in accept(root, second, last)} == {"applied"}
    assert read(root / "f.txt") == "top\n\na\nb\nc\n"
    assert stet_json("status", cwd=root)["hunks"][0]["id"] == first
