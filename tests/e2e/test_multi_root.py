"""Every workspace folder is a root; anything outside all of them is refused."""

import sqlite3

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from support.harness import Session, read, rng, uri, write


async def test_two_roots_and_a_folder_added_later(tmp_path):
    one, two, three = tmp_path / "one", tmp_path / "two", tmp_path / "three"
    for folder, name in ((one, "x.txt"), (two, "y.txt"), (three, "z.txt")):
        write(folder / name, "old\n")
    s = Session(one, folders=[one, two])
    await s.start()
    try:
        res = await s.propose(
            "p", {uri(one / "x.txt"): [(rng(0, 0, 1, 0), "new\n")], uri(two / "y.txt"): [(rng(0, 0, 1, 0), "new\n")]}
        )
        assert len(res["hunks"]) == 2
        with pytest.raises(JsonRpcException) as err:  # the whole proposal is refused
            await s.propose(
                "q", {uri(two / "y.txt"): [(rng(0, 0, 1, 0), "q\n")], uri(three / "z.txt"): [(rng(0, 0, 1, 0), "q\n")]}
            )
        assert err.value.code == -32003
        await s.command("stet.acceptAll", {"proposalId": "p"})
        assert read(one / "x.txt") == "new\n" and read(two / "y.txt") == "new\n"
        assert (one / ".stet" / "stet.db").exists() and not (two / ".stet").exists()  # the first folder holds the store
        s.client.workspace_did_change_workspace_folders(
            types.DidChangeWorkspaceFoldersParams(
                types.WorkspaceFoldersChangeEvent(added=[types.WorkspaceFolder(uri(three), "three")], removed=[])
            )
        )
        # (a notification is handled before the next message: no wait)
        res = await s.propose("r", {uri(three / "z.txt"): [(rng(0, 0, 1, 0), "r\n")]})
        assert res["hunks"][0]["uri"] == uri(three / "z.txt")
        assert read(three / "z.txt") == "old\n"
        # Stored relative to each root, the added folder by its index (docs/protocol.md, "Paths in the store").
        conn = sqlite3.connect(one / ".stet" / "stet.db")
        try:
            stored = sorted(r[0] for r in conn.execute("SELECT uri FROM hunks"))
        finally:
            conn.close()
        assert stored == ["stet-repo:///x.txt", "stet-root:1/y.txt", "stet-root:2/z.txt"]
    finally:
        await s.stop()


async def test_symlink_out_of_the_root_is_refused(ws, session, tmp_path):
    outside = write(tmp_path / "secret.txt", "secret\n")
    (ws / "link.txt").symlink_to(outside)
    with pytest.raises(JsonRpcException) as err:
        await session.propose("s", {uri(ws) + "/link.txt": [(rng(0, 0, 1, 0), "pwned\n")]})
    assert err.value.code == -32003
    assert read(outside) == "secret\n"
