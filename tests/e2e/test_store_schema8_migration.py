"""A review store written by Stet at schema 8 (absolute paths; tests/support/v8store.py), opened
by this version where it was written: migrated in one step to paths relative to the workspace's
root, with every status, range and text as that version left them, its request ids and proposals
answering as before, its journaled edit finished once, its applied hunks undone. And one moved
before this version first opened it: its paths kept as they are until it is back where they fit."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

from stet.store.schema import SCHEMA_VERSION
from support import clitools
from support.clitools import stet, stet_json
from support.engines import Databases, cluster
from support.v8store import MADE_AT, PG_ARCHIVE, load_dump, made_here, schema_version, stored_absolute, unpack

# What a hunk is, whatever reads it (the order and the fields the protocol names).
FIELDS = ("id", "proposalId", "taskId", "uri", "kind", "status", "range", "oldText", "newText", "newUri")
FIELDS += ("message", "feedback", "version", "decidedAt", "inFile")


def _hunks(status: dict) -> dict[str, dict]:
    return {h["id"]: {k: h.get(k) for k in FIELDS} for h in status["hunks"]}


def _of(expected: dict, proposal: str) -> set[str]:
    return {h["id"] for h in expected["status"]["hunks"] if h["proposalId"] == proposal}


def _as_before(root: Path, expected: dict) -> None:
    """Every hunk as Stet 8 left it; the accept it was killed in finished, once."""
    now = _hunks(stet_json("status", "--all", cwd=root))
    before = _hunks(expected["status"])
    a3 = expected["ids"]["a3"]
    assert set(now) == set(before)
    for hid, h in before.items():
        if hid == a3:
            assert (now[hid]["status"], now[hid]["inFile"], now[hid]["range"]) == ("applied", True, h["range"])
            continue
        assert now[hid] == h, hid
    text = (root / "a.py").read_text()
    assert text.count("A14 = 14\n") == 1 and "a14 = 14\n" not in text
    assert text == expected["files"]["a.py"].replace("a14 = 14\n", "A14 = 14\n")
    for name, content in expected["files"].items():
        if name != "a.py":
            assert (root / name).read_text() == content, name


def test_a_store_of_schema_8_is_migrated_with_every_hunk_as_it_was():
    with made_here() as (root, expected):
        _migrated(root, expected, str(root / ".stet" / "stet.db"))


def test_a_postgresql_store_of_schema_8_is_migrated_with_every_hunk_as_it_was():
    """Its first root was stored `stet-repo:///` already, and so was any text that started with
    it (a hunk's): the texts are read back as that version read them."""
    databases = Databases(cluster())
    try:
        url = databases.new()
        with made_here(PG_ARCHIVE) as (root, expected):
            load_dump(root.parent, url)
            clitools.ENGINE_ENV["STET_DB"] = url
            try:
                _migrated(root, expected, url)
            finally:
                clitools.ENGINE_ENV.clear()
    finally:
        databases.drop()


def _migrated(root: Path, expected: dict, db: str) -> None:
    ops_before = len(expected["log"]["ops"]) + 1  # and the accept killed after its commit
    _as_before(root, expected)
    assert schema_version(db) == SCHEMA_VERSION and stored_absolute(db) == []
    links = next(h for h in expected["status"]["hunks"] if h["proposalId"] == "p-links")
    assert links["oldText"] == MADE_AT.as_uri() + "/a.py\n"  # (a text: compared whole by _as_before)
    log = stet_json("log", cwd=root)["ops"]
    assert [o["opId"] for o in log[:ops_before]] == [o["opId"] for o in expected["log"]["ops"]] + ["r-accept-3"]
    assert log[: len(expected["log"]["ops"])] == expected["log"]["ops"]  # the op log read as it was written

    # The same request ids answer what they answered (nothing is done again).
    ids = expected["ids"]
    calls = {
        "r-accept-1": ("accept", ids["a1"]),
        "r-reject-2": ("reject", ids["a2"], "--feedback", "keep it low"),
        "r-part-4": ("accept", ids["a4"], "--old", "1", "--new", "1"),
        "r-undo-5": ("undo", ids["a5"]),
        "r-files": ("accept", ids["create"], ids["rename"]),
        "r-task": ("task", "start", "--id", "t1", "--goal", "louder", "Shout"),
        "r-step": ("task", "step", "t1", "edit a.py"),
        "r-note": ("task", "note", "t1", "capitals", "--why", "louder"),
        "r-read": ("task", "read", "t1", "a.py"),
    }
    length = len(stet_json("log", cwd=root)["ops"])
    for request, args in calls.items():
        answer = stet_json(*args, "--request-id", request, cwd=root)
        assert answer == expected["answers"][request], request
    assert len(stet_json("log", cwd=root)["ops"]) == length
    resume = stet_json("resume", "t1", cwd=root)
    assert (
        resume["filesRead"][0]["uri"] == (root / "a.py").as_uri()
        and resume["decisions"] == expected["resume"]["decisions"]
    )
    # A proposal sent again with the same id is the same proposal.
    again = stet_json(
        "propose", "--patch", str(root.parent / "a.diff"), "--task", "t1", "--id", "p-a", "-m", "shout", cwd=root
    )
    assert {h["id"] for h in again["hunks"]} == _of(expected, "p-a")
    files = stet_json("propose", "--edit", str(root.parent / "files.json"), "--id", "p-files", "-m", "files", cwd=root)
    assert {h["id"] for h in files["hunks"]} == _of(expected, "p-files")
    assert len(stet_json("log", cwd=root)["ops"]) == length

    # Applied hunks are undone (the file operations too), pending ones decided.
    stet_json("undo", ids["a1"], ids["create"], ids["rename"], cwd=root)
    assert (root / "a.py").read_text().startswith("a1 = 1\na2 = 2\n")
    assert not (root / "new.txt").exists() and (root / "old.txt").read_text() == "old\n"
    assert not (root / "renamed.txt").exists()
    gone = next(h["id"] for h in expected["status"]["hunks"] if h["kind"] == "delete")
    stet_json("accept", ids["a5"], gone, cwd=root)
    assert "A26 = 26\n" in (root / "a.py").read_text() and not (root / "gone.txt").exists()
    states = _hunks(stet_json("status", "--all", cwd=root))
    assert states[ids["a5"]]["status"] == states[gone]["status"] == "applied"
    assert states[ids["a1"]]["status"] == "pending"


def test_the_migration_takes_the_root_of_the_opening_process_for_a_store_elsewhere():
    """`--db` names a store outside the workspace: its paths are made relative to the root the
    command opens it with."""
    with made_here() as (root, expected):
        db = root.parent / "elsewhere" / "review.db"
        db.parent.mkdir(mode=0o700)
        shutil.move(root / ".stet" / "stet.db", db)
        status = stet_json("--db", str(db), "--root", str(root), "status", "--all", cwd=root)
        assert _hunks(status) == _hunks(stet_json("status", "--all", cwd=root, env={"STET_DB": str(db)}))
        assert {h["id"]: h["status"] for h in status["hunks"]}[expected["ids"]["a2"]] == "rejected"
        assert schema_version(str(db)) == SCHEMA_VERSION and stored_absolute(str(db)) == []
        conn = sqlite3.connect(db)
        try:
            uri = conn.execute("SELECT uri FROM hunks WHERE id = ?", (expected["ids"]["a2"],)).fetchone()
        finally:
            conn.close()
        assert uri == ("stet-repo:///a.py",)


def test_a_store_moved_before_the_upgrade_keeps_its_paths_until_opened_where_they_fit(tmp_path):
    """Written in MADE_AT, first opened by this version after its folder moved: its absolute paths
    fit no root, so they are kept as they are - read, never judged stale, never lost - until the
    folder is back where they fit: then they are made relative, and everything is as it was."""
    root, expected = unpack(tmp_path / "moved")
    first = stet_json("status", "--all", cwd=root)
    assert schema_version(str(root / ".stet" / "stet.db")) == SCHEMA_VERSION
    before, now = _hunks(expected["status"]), _hunks(first)
    a3 = expected["ids"]["a3"]
    for hid, h in before.items():
        assert now[hid]["uri"] == h["uri"] and h["uri"].startswith(MADE_AT.as_uri() + "/")  # read as written
        if hid != a3:
            assert now[hid]["status"] == h["status"] and now[hid]["range"] == h["range"], hid
    assert now[a3]["status"] == "accepted"  # its edit waits: its file is not in this workspace
    assert (root / "a.py").read_text() == expected["files"]["a.py"]  # nothing was written
    refused = stet("accept", expected["ids"]["a5"], "--json", cwd=root)
    assert refused.returncode != 0 and (root / "a.py").read_text() == expected["files"]["a.py"]
    assert _hunks(stet_json("status", "--all", cwd=root)) == now  # nothing was judged or changed
    with made_here() as (there, _):
        shutil.rmtree(there)
        root.rename(there)  # the folder back where it was written
        _as_before(there, expected)
        assert stored_absolute(str(there / ".stet" / "stet.db")) == []
