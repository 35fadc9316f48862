"""The inbox never stops the server and never
writes or moves anything outside the workspace.

The attacks, for real: `.stet/inbox`, `done/` or `failed/` made a symlink to an outside folder
holding the user's files (with the very names the inbox would write or move); a FIFO, a
symlink to a FIFO, a symlink to /dev/zero, a character device and a huge (sparse) file dropped
into the inbox. Each is refused into `failed/` with its reason (or, for a symlinked folder,
not used at all, with a message to the editor), nothing outside changes, and the server goes
on answering. Stet's folders are 0700 whatever the umask."""

from __future__ import annotations

import json
import os
import shutil
import stat
import time

import pytest

from support.flipper import fingerprint
from support.harness import rng, write
from support.rawlsp import RawServer


@pytest.fixture
def world(tmp_path):
    ws, out = tmp_path / "ws", tmp_path / "outside"
    write(ws / "f.txt", "one\ntwo\n")
    out.mkdir()
    return ws, out


def good(ws) -> str:
    return json.dumps({"edit": {"changes": {(ws / "f.txt").as_uri(): [{"range": rng(0, 0, 1, 0), "newText": "X\n"}]}}})


def _user_folder(out, ws):
    user = out / "users-folder"
    user.mkdir()
    # The user's own files outside, with the names the inbox would take, move or write.
    (user / "p1.json").write_text(good(ws))
    (user / "bad.json").write_text("user data\n")
    (user / "bad.error").write_text("the user's own file\n")
    return user


def _symlink_out(inbox, which, user):
    target = inbox if which == "inbox" else inbox / which
    shutil.rmtree(target)
    os.symlink(user, target)


@pytest.mark.parametrize("which", ["done", "failed", "inbox"])
def test_inbox_folders_made_symlinks_out_before_a_start_are_not_used(world, which):
    ws, out = world
    user = _user_folder(out, ws)
    inbox = ws / ".stet" / "inbox"
    s = RawServer(ws)
    s.initialize()
    s.stop()  # the store and the inbox exist now
    _symlink_out(inbox, which, user)
    if which != "inbox":
        (inbox / "p1.json").write_text(good(ws))
        (inbox / "bad.json").write_text("{{{ not json")
    before = fingerprint(user)
    s = RawServer(ws, env={"STET_INBOX_RETRY": "0.1"})
    try:
        s.initialize()
        time.sleep(1.5)  # the inbox had its chances to move files
        assert fingerprint(user) == before, "the inbox wrote or moved outside the workspace"
        message = s.wait_note("window/showMessage", timeout=30)["message"]
        assert "inbox" in message and "symlink" in message, message
        assert s.alive() and s.call("stet/listHunks", {})["hunks"] == []  # not read at all
    finally:
        s.kill()


@pytest.mark.parametrize("which", ["done", "failed"])
def test_inbox_folders_made_symlinks_out_while_it_runs_get_nothing(world, which):
    ws, out = world
    user = _user_folder(out, ws)
    inbox = ws / ".stet" / "inbox"
    s = RawServer(ws, env={"STET_INBOX_RETRY": "0.1"})
    try:
        s.initialize()
        _symlink_out(inbox, which, user)
        before = fingerprint(user)
        (inbox / "p1.json").write_text(good(ws))
        (inbox / "bad.json").write_text("{{{ not json")
        time.sleep(1.5)
        assert fingerprint(user) == before, "the inbox wrote or moved outside the workspace"
        message = s.wait_note("window/showMessage", timeout=30)["message"]
        assert "inbox" in message and "symlink" in message, message
        assert s.alive()
        # The proposal itself was ingested (committed before any move): only the move is refused.
        assert [h["proposalId"] for h in s.call("stet/listHunks", {})["hunks"]] == ["p1"]
        if which == "done":
            assert (inbox / "p1.json").exists() and (inbox / "failed" / "bad.error").exists()
        else:  # failed/ is a symlink: the bad file stays where it is, nothing is written for it
            assert (inbox / "bad.json").exists() and not (inbox / "p1.json").exists()
    finally:
        s.kill()


def test_fifos_devices_and_huge_files_in_the_inbox_never_stop_the_server(world):
    ws, out = world
    os.mkfifo(out / "pipe")
    s = RawServer(ws)
    try:
        s.initialize()
        inbox = ws / ".stet" / "inbox"
        os.mkfifo(inbox / "fifo.json")
        os.symlink(out / "pipe", inbox / "to-fifo.patch")
        os.symlink("/dev/zero", inbox / "zero.json")
        os.mknod(inbox / "device.json", stat.S_IFCHR | 0o600, os.makedev(1, 5))  # /dev/zero's numbers
        with open(inbox / "huge.json", "wb") as f:
            f.truncate(64 * 1024 * 1024)  # sparse: 64 MiB that cost nothing to make
        (inbox / "fine.json").write_text(good(ws))
        names = ["fifo.json", "to-fifo.patch", "zero.json", "device.json", "huge.json"]
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and any(os.path.lexists(inbox / n) for n in [*names, "fine.json"]):
            assert s.alive()  # answered all along
            time.sleep(0.1)
        for name in names:
            assert os.path.lexists(inbox / "failed" / name), name
            why = (inbox / "failed" / (name.rsplit(".", 1)[0] + ".error")).read_text()
            assert "regular files only" in why, (name, why)
        assert "FIFO" in (inbox / "failed" / "fifo.error").read_text()
        assert "symlink" in (inbox / "failed" / "zero.error").read_text()
        assert "device" in (inbox / "failed" / "device.error").read_text()
        assert "limit" in (inbox / "failed" / "huge.error").read_text()
        assert [h["proposalId"] for h in s.call("stet/listHunks", {})["hunks"]] == ["fine"]
        assert (out / "pipe").is_fifo()
    finally:
        s.kill()
    s = RawServer(ws)  # a restart does not read them again
    try:
        s.initialize()
        assert s.alive()
    finally:
        s.kill()


def test_stet_folders_are_for_their_owner_only_whatever_the_umask(world):
    ws, _ = world
    old = os.umask(0)
    try:
        (ws / ".stet").mkdir(mode=0o777)  # as an older Stet left it under umask 000
        os.chmod(ws / ".stet", 0o777)
        s = RawServer(ws)
        try:
            s.initialize()
            assert s.alive()
        finally:
            s.kill()
    finally:
        os.umask(old)
    for rel in (".stet", ".stet/inbox", ".stet/inbox/done", ".stet/inbox/failed"):
        assert stat.S_IMODE(os.stat(ws / rel).st_mode) == 0o700, rel
    for rel in (".stet/stet.db", ".stet/files.lock"):
        assert stat.S_IMODE(os.stat(ws / rel).st_mode) & 0o077 == 0, rel


def test_a_symlinked_store_folder_is_refused(world):
    ws, out = world
    os.symlink(out, ws / ".stet")
    s = RawServer(ws)
    try:
        s.initialize()
        assert "symlink" in s.restored.get("error", ""), s.restored
        answer = s.request("stet/listHunks", {})
        assert answer["error"]["code"] == -32005 and "symlink" in answer["error"]["message"]
    finally:
        s.kill()
    assert os.listdir(out) == []
