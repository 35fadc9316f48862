"""workspace/safe.py against a racing hand, on a real file system: what is written is answered
written, what is not is refused (the race test in test_writes_stay_in_workspace.py meets these moments
only now and then; here each is made to happen)."""

from __future__ import annotations

import os

from stet.workspace import safe


def test_a_new_file_whose_temp_name_is_moved_away_after_the_link_is_written(tmp_path, monkeypatch):
    # A hostile agent (or the race test's flipper merging a folder back) moves Stet's temp file
    # between the link that made the new file and the removal of the temp name: the file is
    # there, so the write is done - answering "failed" would make a created file look stale.
    folder, elsewhere = tmp_path / "sub", tmp_path / "elsewhere"
    folder.mkdir()
    elsewhere.mkdir()
    real_link = os.link

    def link_then_move_temp(src, dst, *, src_dir_fd=None, dst_dir_fd=None, follow_symlinks=True):
        real_link(src, dst, src_dir_fd=src_dir_fd, dst_dir_fd=dst_dir_fd, follow_symlinks=follow_symlinks)
        os.rename(folder / src, elsewhere / src)

    monkeypatch.setattr(os, "link", link_then_move_temp)
    safe.write_file(str(folder / "made.txt"), b"made\n")
    assert (folder / "made.txt").read_bytes() == b"made\n"
    assert [n for n in os.listdir(elsewhere) if safe.is_temp_name(n)]  # the hand really moved it


def test_a_new_file_is_never_linked_over_one_that_appeared(tmp_path, monkeypatch):
    folder = tmp_path / "sub"
    folder.mkdir()
    real_link = os.link

    def someone_first(src, dst, *, src_dir_fd=None, dst_dir_fd=None, follow_symlinks=True):
        (folder / dst).write_text("theirs\n")
        real_link(src, dst, src_dir_fd=src_dir_fd, dst_dir_fd=dst_dir_fd, follow_symlinks=follow_symlinks)

    monkeypatch.setattr(os, "link", someone_first)
    try:
        safe.write_file(str(folder / "made.txt"), b"made\n")
    except FileExistsError:
        pass
    else:
        raise AssertionError("a file that appeared meanwhile was written over")
    assert (folder / "made.txt").read_text() == "theirs\n"
    assert not [n for n in os.listdir(folder) if safe.is_temp_name(n)]  # no temp file left behind


def symlink_at_the_open(monkeypatch, name: str) -> None:
    """Make `name` look like a symlink to the O_NOFOLLOW | O_DIRECTORY open (ENOTDIR) only:
    whatever looks at it next sees what is really there (a swap in between)."""
    real_open = os.open

    def opened(path, flags, mode=0o777, *, dir_fd=None):
        if path == name and flags & os.O_DIRECTORY:
            raise NotADirectoryError(20, "Not a directory", name)
        return real_open(path, flags, mode, dir_fd=dir_fd)

    monkeypatch.setattr(os, "open", opened)


def test_a_folder_that_was_a_symlink_when_opened_and_a_folder_again_is_refused(tmp_path, monkeypatch):
    # The race test's "two renames" flipper: the folder is a symlink at the O_NOFOLLOW open
    # (ENOTDIR) and a real folder again at the lstat that says why. That is a swap under Stet,
    # refused like any symlink on the way, not an internal error (CI, seen once in 1,100 tests).
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "f.txt").write_text("x\n")
    symlink_at_the_open(monkeypatch, "sub")
    for reach in (
        lambda: safe.open_folder(str(tmp_path / "sub")),
        lambda: safe.read_file_identified(str(tmp_path / "sub" / "f.txt"), None),
    ):
        try:
            reach()
        except safe.SymlinkOnPath as exc:
            assert "changed while Stet reached it" in exc.message
        else:
            raise AssertionError("a swapped folder was reached")


def test_a_folder_missing_after_a_failed_open_is_refused_as_swapped(tmp_path, monkeypatch):
    # Between the two renames the name is briefly absent: the same swap, the same refusal.
    symlink_at_the_open(monkeypatch, "gone")
    try:
        safe.open_folder(str(tmp_path / "gone"))
    except safe.SymlinkOnPath:
        pass
    else:
        raise AssertionError("no refusal")
