"""`stet status` reads the store without opening the review when nothing needs bringing up to
date (review/glance.py). What it shows must be what the full open shows, and whenever the
full open would change something first (an edit to finish, a file changed since Stet looked,
a store to migrate) the glance must step aside. Real stores, real files, the real CLI."""

from __future__ import annotations

import os
import signal
import sqlite3

import pytest

from stet.present import hunk_json
from stet.review import open_review
from stet.review.glance import glance, glance_whole
from support.clitools import commit_all, make_repo, stet, stet_json
from support.harness import read, until, write

BASE = "".join(f"line {i}\n" for i in range(1, 41))


def diff(n: int, new: str) -> str:
    return f"--- a/f.txt\n+++ b/f.txt\n@@ -{n} +{n} @@\n-line {n}\n+{new}\n"


@pytest.fixture
def repo(tmp_path):
    root = make_repo(tmp_path / "repo")
    write(root / "f.txt", BASE)
    write(root / "g.txt", "alpha\nbeta\n")
    commit_all(root)
    return root


def db(repo) -> str:
    return str(repo / ".stet" / "stet.db")


def propose(repo, n: int, new: str) -> str:
    (h,) = stet_json("propose", "--patch", "-", "-m", f"why {n}", cwd=repo, input=diff(n, new))["hunks"]
    return h["id"]


def _seen(h) -> tuple:
    """What `stet status` prints of a hunk (and where it is)."""
    return (h.id, h.status.value, h.line, h.in_file, h.gone, h.shown, h.message, h.feedback, h.kept)


async def full(repo) -> list[tuple]:
    """What the full open (the one bootstrap every process uses) has, as the glance gives it."""
    review = (await open_review([str(repo)], db(repo))).review
    try:
        return [_seen(h) for h in review.list()]
    finally:
        await review.close()


def seen(repo) -> list[tuple] | None:
    hunks = glance(db(repo), [str(repo)])
    return None if hunks is None else [_seen(h) for h in hunks]


async def test_a_glance_shows_what_the_full_open_shows_in_every_status(repo):
    a, b, c, d = (propose(repo, n, f"changed {n}") for n in (3, 12, 25, 33))
    assert stet("accept", a, cwd=repo).returncode == 0
    assert stet("reject", b, "--feedback", "no", cwd=repo).returncode == 0
    write(repo / "f.txt", read(repo / "f.txt").replace("line 25\n", "typed over\n"))  # c goes stale
    write(repo / "f.txt", read(repo / "f.txt").replace("changed 3\n", "line 3\n"))  # a's text removed
    assert seen(repo) is None  # the file changed since Stet looked: the full open judges it first
    expected = await full(repo)
    statuses = {h[0]: (h[1], h[3]) for h in expected}
    assert statuses[a] == ("applied", False) and statuses[b][0] == "rejected" and statuses[c][0] == "stale"
    assert statuses[d] == ("pending", None)
    assert seen(repo) == expected  # judged and stamped: now a glance is enough, and the same
    assert {h[6] for h in expected} == {"why 3", "why 12", "why 25", "why 33"}  # the proposals' messages
    out = stet("status", "--all", cwd=repo).stdout
    assert "applied (not in file)" in out and "stale" in out and "rejected" in out and "pending" in out


async def test_status_json_through_a_glance_is_what_the_full_open_prints(repo):
    """`stet status --json` (what agents read) glances too: the same HunkStates, counts, root
    and store, byte for byte, in every status and with a kept, a problem-free and a fed-back hunk."""
    a, b, c, d = (propose(repo, n, f"changed {n}") for n in (3, 12, 25, 33))
    assert stet("accept", a, cwd=repo).returncode == 0
    assert stet("reject", b, "--feedback", "not this", cwd=repo).returncode == 0
    write(repo / "f.txt", read(repo / "f.txt").replace("line 25\n", "typed over\n"))  # c goes stale
    write(repo / "f.txt", read(repo / "f.txt").replace("changed 3\n", "line 3\n"))  # a's text removed
    write(repo / "g.txt", "alpha\nBETA\n")
    assert stet("capture", "g.txt", "--keep", cwd=repo).returncode == 0  # a kept hunk
    assert glance_whole(db(repo), [str(repo)]) is None  # f.txt changed: the full open judges it first
    review = (await open_review([str(repo)], db(repo))).review
    try:
        listed = review.list()
        expected = {
            "root": review.ws.roots[0],
            "db": review.require_store().path,
            "hunks": [hunk_json.state(h) for h in listed],
        }
    finally:
        await review.close()
    whole = glance_whole(db(repo), [str(repo)])
    assert whole is not None and [hunk_json.state(h) for h in whole] == expected["hunks"]
    out = stet_json("status", "--all", cwd=repo)
    assert {k: out[k] for k in expected} == expected
    assert out["counts"] == {"pending": 2, "accepted": 0, "applied": 1, "rejected": 1, "stale": 1, "superseded": 0}
    assert out["appliedNotInFile"] == 1
    states = {h["id"]: h for h in out["hunks"]}
    assert states[a]["inFile"] is False and states[b]["feedback"] == "not this" and states[c]["status"] == "stale"
    assert states[d]["message"] == "why 33" and any(h.get("kept") for h in out["hunks"])


async def test_an_applied_hunks_range_through_a_glance_is_the_full_opens(repo):
    """Where an applied hunk is shown is its new text (one line became three here; a file made
    from nothing): the glance says so as the full open does, not the range of its old text."""
    diff3 = "--- a/f.txt\n+++ b/f.txt\n@@ -7 +7,3 @@\n-line 7\n+seven\n+and\n+more\n"
    (grown,) = stet_json("propose", "--patch", "-", cwd=repo, input=diff3)["hunks"]
    made = "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+made\n+here\n"
    (created,) = stet_json("propose", "--patch", "-", cwd=repo, input=made)["hunks"]
    assert stet("accept", grown["id"], created["id"], cwd=repo).returncode == 0
    review = (await open_review([str(repo)], db(repo))).review
    try:
        expected = {h.id: hunk_json.state(h) for h in review.list()}
    finally:
        await review.close()
    whole = glance_whole(db(repo), [str(repo)])
    assert whole is not None and {h.id: hunk_json.state(h) for h in whole} == expected
    assert expected[grown["id"]]["range"]["end"]["line"] == 9 and expected[created["id"]]["range"]["end"]["line"] == 2


async def test_the_glance_steps_aside_whenever_the_full_open_would_change_something(repo):
    hid = propose(repo, 5, "five")
    await full(repo)  # judged and stamped
    assert seen(repo) is not None
    # An edit decided and journaled but not written (a CLI killed after its decision).
    p = stet("accept", hid, cwd=repo, env={"STET_FAULT": "decide:after-commit"})
    assert p.returncode == -signal.SIGKILL
    assert seen(repo) is None
    out = stet("status", "--all", cwd=repo)
    assert out.returncode == 0 and "applied" in out.stdout and read(repo / "f.txt").count("five\n") == 1
    assert seen(repo) is not None
    # Touched (same content, another mtime): the full open hashes it, finds it unchanged, stamps it.
    st = os.stat(repo / "f.txt")
    os.utime(repo / "f.txt", ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    assert seen(repo) is None
    await full(repo)
    assert seen(repo) is not None
    # The file gone.
    os.rename(repo / "f.txt", repo / "f.moved")
    assert seen(repo) is None
    os.rename(repo / "f.moved", repo / "f.txt")
    # A store of another schema version: the full open migrates (or refuses) it.
    conn = sqlite3.connect(db(repo))
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    conn.execute(f"PRAGMA user_version={version - 1}")
    conn.close()
    assert seen(repo) is None
    conn = sqlite3.connect(db(repo))
    conn.execute(f"PRAGMA user_version={version}")
    conn.close()


async def test_status_through_a_glance_reads_and_writes_nothing_else(repo):
    propose(repo, 7, "seven")
    await full(repo)
    before = {p.name: p.stat().st_mtime_ns for p in (repo / ".stet").iterdir() if p.name.startswith("stet.db")}
    data = (repo / ".stet" / "stet.db").read_bytes()
    out = stet("status", cwd=repo)
    assert out.returncode == 0 and "1 pending" in out.stdout and "f.txt" in out.stdout
    assert (repo / ".stet" / "stet.db").read_bytes() == data
    assert read(repo / "f.txt") == BASE
    after = {p.name: p.stat().st_mtime_ns for p in (repo / ".stet").iterdir() if p.name == "stet.db"}
    assert after["stet.db"] == before["stet.db"]


async def test_a_file_stet_wrote_itself_needs_no_second_look(repo):
    """After a CLI accept or undo the file holds what Stet wrote and judged: it is stamped with
    the outcome, so the next process (a `stet status`) glances instead of reading it again;
    a pending hunk over the lines just written is judged at once (stale), not later."""
    a = propose(repo, 10, "ten")
    (b,) = stet_json("propose", "--patch", "-", "--id", "again", cwd=repo, input=diff(10, "TEN, another idea"))["hunks"]
    c = propose(repo, 30, "thirty")
    await full(repo)
    assert stet("accept", a, cwd=repo).returncode == 0
    hunks = seen(repo)
    assert hunks is not None, "the file Stet just wrote should not need another look"
    by_id = {h[0]: h[1] for h in hunks}
    assert by_id == {a: "applied", b["id"]: "stale", c: "pending"}
    assert hunks == await full(repo)
    assert stet("undo", a, cwd=repo).returncode == 0
    assert seen(repo) is not None and read(repo / "f.txt") == BASE
    assert {h[0]: h[1] for h in seen(repo)}[a] == "pending"


async def test_positions_followed_in_an_open_buffer_are_not_taken_for_the_files(repo):
    """A server checkpoints where hunks are in the editor's buffer (lines typed above them, not
    saved): those are not the file's positions, so its stamp goes and the next process reads
    the file instead of glancing at the buffer's lines."""
    from support.harness import Session, rng

    hid = propose(repo, 30, "thirty")
    await full(repo)
    assert [h[2] for h in seen(repo) or []] == [29]
    s = Session(repo)
    await s.start()
    try:
        f = s.open(repo / "f.txt")
        s.type(f, rng(0, 0, 0, 0), "typed\nthree\nlines\n")
        await until(lambda: stored_line(repo, hid) == 32, "the idle checkpoint storing the buffer's positions")
        assert read(repo / "f.txt") == BASE  # not saved
        assert seen(repo) is None, "the file's stamp must not vouch for positions in a buffer"
    finally:
        await s.stop()


def stored_line(repo, hid: str) -> int:
    conn = sqlite3.connect(db(repo))
    try:
        return conn.execute("SELECT line FROM hunks WHERE id = ?", (hid,)).fetchone()[0]
    finally:
        conn.close()


@pytest.mark.parametrize("as_json", [False, True])
def test_a_temp_file_a_kill_left_makes_status_open_the_review_which_removes_it(repo, as_json):
    propose(repo, 5, "LINE FIVE")
    from stet.workspace.safe import temp_name

    left = repo / temp_name("f.txt")  # what a write killed between its temp file and its rename leaves
    left.write_bytes(b"half a write")
    assert glance(db(repo), [str(repo)]) is None  # the glance steps aside
    args = ["status", "--json"] if as_json else ["status"]
    assert stet(*args, cwd=repo).returncode == 0
    assert not left.exists(), "the full open removes Stet's own leftovers"
    assert glance(db(repo), [str(repo)]) is not None  # and the next status glances again


def test_a_capture_killed_with_its_restore_journal_open_is_finished_by_status(tmp_path):
    from support.capturetools import AGENT, agent_repo, captures
    from support.clitools import snapshot

    root = agent_repo(tmp_path / "repo")
    baseline = snapshot(root)
    assert os.system(f"cd '{root}' && {' '.join(AGENT)} 1 >/dev/null") == 0  # the agent edits files
    killed = stet("capture", cwd=root, env={"STET_FAULT": "capture:after-commit"})
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    store = root / ".stet" / "stet.db"
    assert {state for _, state in captures(store)} == {"pending"}
    assert glance(str(store), [str(root)]) is None  # the journal is open: the glance steps aside
    assert stet_json("status", "--all", cwd=root)["hunks"]
    assert {state for _, state in captures(store)} == {"done"}
    assert snapshot(root) == baseline, "the capture's restores were finished by the status command"
