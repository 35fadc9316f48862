"""Reading and writing files without ever leaving the workspace, even in a race.

The paths Stet keeps are real paths (every symlink on them was resolved when they came in),
so a symlink found on one now was planted since: it is refused, never followed. Every
operation here reaches its folder one component at a time from "/" with `O_NOFOLLOW`
(`open_folder`), then works *inside that folder handle* with `dir_fd` calls, so what is
checked is what is written. A file is opened with `O_NOFOLLOW | O_NONBLOCK` and must be a
regular file (`fstat`): a FIFO cannot block a read, a device cannot feed one forever.
Just before a write becomes visible (the rename, the link, the unlink) the folder is
reached again from "/" and must still be the same folder, and the file the same file.

What is refused raises a `StetError` whose message says why, for the caller to show:
- `SymlinkOnPath` (OutsideWorkspace, -32003): a component is a symlink, or the folder or
  file changed while Stet was working on it;
- `NotAFile` (InvalidParams, -32602): a folder, FIFO, device or socket where a file should
  be, or a file where a folder should be;
- `CannotKeep` (InvalidParams): rewriting the file would lose something Stet cannot carry
  over (a hard link, its owner, an extended attribute).
Other `OSError`s (a full disk, a read-only file system, no permission) pass through.

Rewriting an existing file (`write_file`) is atomic - a temp file beside it, fsync, rename -
and keeps the file's mode, owner and group (`fchown`, where the process may) and its
extended attributes (POSIX ACLs and SELinux labels are extended attributes). A file with more
than one hard link is refused (`CannotKeep`): a rename would silently split it from its other
names. Temp files have self-checking names (`is_temp_name`), so a start-up sweep removes
Stet's own leftovers and never a developer's file that merely looks alike.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import re
import secrets
import stat
from collections.abc import Callable, Iterator

from ..errors import InvalidParams, OutsideWorkspace
from . import modes
from .tempnames import TEMP_MARK  # one definition, shared with the glance

_TEMP = re.compile(r"^\.(?P<base>.+)\.stet-tmp-(?P<rand>[0-9a-f]{16})-(?P<tag>[0-9a-f]{8})$")
_O_PATH = getattr(os, "O_PATH", 0)  # Linux: a handle that needs no read permission on the folder
_WALK = (_O_PATH or os.O_RDONLY) | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC  # one we list or fsync
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
# Errors that a later attempt may not meet: the decision waits, the write is tried again.
TRANSIENT = frozenset(
    {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EIO, errno.EAGAIN, errno.EINTR, errno.ENOMEM}
    | {errno.EMFILE, errno.ENFILE, errno.EBUSY, errno.ETXTBSY}
)


class SymlinkOnPath(OutsideWorkspace):
    """A symlink on the way, or a folder or file swapped while Stet worked on it."""


class Replaced(SymlinkOnPath):
    """The file was replaced by another one (an atomic save, a checkout) while Stet worked on it."""


class NotAFile(InvalidParams):
    """Not a regular file where one should be (or a file where a folder should be)."""


class TooLarge(NotAFile):
    """A file larger than the caller's limit: refused from its size, before a byte is read."""


class CannotKeep(InvalidParams):
    """Rewriting the file would lose something of it (a hard link, its owner, an attribute)."""


def is_transient(exc: BaseException) -> bool:
    """An error worth trying again later (a full disk, a read-only file system...)."""
    return isinstance(exc, OSError) and exc.errno in TRANSIENT


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symlink"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a file"


def _refusal(parent: int, name: str, where: str, exc: OSError) -> Exception:
    """What a failed O_NOFOLLOW open of `name` in `parent` means, said plainly."""
    swapped = exc.errno in (errno.ENOTDIR, errno.ELOOP)  # not a folder when it was opened
    try:
        mode = os.lstat(name, dir_fd=parent).st_mode
    except OSError:
        mode = None
    if swapped and (mode is None or stat.S_ISDIR(mode)):  # a folder (or nothing) again: swapped meanwhile
        return SymlinkOnPath(f"{where} changed while Stet reached it (a symlink or a file took its place)")
    if mode is None:
        return exc
    if stat.S_ISLNK(mode):
        return SymlinkOnPath(f"{where} is a symlink: Stet does not follow symlinks inside the workspace")
    if exc.errno in (errno.ENOTDIR, errno.ELOOP):
        return NotAFile(f"{where} is {_kind(mode)}, not a folder")
    return exc


def _parts(path: str) -> list[str]:
    if not os.path.isabs(path):
        raise ValueError(f"not an absolute path: {path}")
    parts = [p for p in os.path.normpath(path).split(os.sep) if p]
    if ".." in parts:  # normpath keeps a leading "/.." only
        raise SymlinkOnPath(f"{path} climbs out with '..'")
    return parts


def open_folder(path: str, *, create: bool = False, mode: int = 0o777, final: bool = True) -> int:
    """A handle on the folder `path`, reached from "/" without following any symlink.

    With `create`, missing folders are made (with `mode`, less the caller's umask: modes.py). The handle is
    open for reading (it can be listed and fsynced) when `final`, else a bare path handle.
    Raises SymlinkOnPath / NotAFile as the module says, FileNotFoundError when a folder is
    missing and not to be created. The caller closes the handle (or uses `folder`)."""
    fd = os.open("/", _WALK)
    here = ""
    try:
        parts = _parts(path)
        for i, part in enumerate(parts):
            here += "/" + part
            flags = _FOLDER if final and i == len(parts) - 1 else _WALK
            try:
                nxt = os.open(part, flags, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                try:
                    os.mkdir(part, modes.wanted(mode), dir_fd=fd)
                except FileExistsError:
                    pass  # made meanwhile: opened (and checked) below like any other
                else:
                    _settle_folder(fd, part, mode)
                nxt = _open_checked(fd, part, here, flags)
            except OSError as exc:
                raise _refusal(fd, part, here, exc) from None
            os.close(fd)
            fd = nxt
        if final and not parts:  # "/" itself: reopen it readable
            nxt = os.open("/", _FOLDER)
            os.close(fd)
            fd = nxt
        return fd
    except BaseException:
        os.close(fd)
        raise


def _settle_folder(parent: int, part: str, mode: int) -> None:
    """The folder this process just made gets exactly its caller's mode (workspace/modes.py);
    a folder that is not one now (swapped meanwhile) is left to the walk to refuse."""
    if modes.caller_umask() is None:
        return
    try:
        fd = os.open(part, _FOLDER, dir_fd=parent)
    except OSError:
        return
    try:
        modes.settle(fd, mode)
    finally:
        os.close(fd)


def _open_checked(parent: int, part: str, where: str, flags: int) -> int:
    try:
        return os.open(part, flags, dir_fd=parent)
    except OSError as exc:
        raise _refusal(parent, part, where, exc) from None


@contextlib.contextmanager
def folder(path: str, *, create: bool = False, mode: int = 0o777) -> Iterator[int]:
    """`open_folder` as a context manager: the handle is closed when the block ends."""
    fd = open_folder(path, create=create, mode=mode)
    try:
        yield fd
    finally:
        os.close(fd)


def same_folder(fd: int, path: str) -> bool:
    """Is `path`, reached again from "/" without symlinks, still the folder of handle `fd`?"""
    try:
        again = open_folder(path, final=False)
    except (OSError, SymlinkOnPath, NotAFile):
        return False
    try:
        a, b = os.fstat(fd), os.fstat(again)
    finally:
        os.close(again)
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def recheck(fd: int, path: str) -> None:
    """Raise SymlinkOnPath unless the folder `path` is still the one of handle `fd`."""
    if not same_folder(fd, path):
        raise SymlinkOnPath(f"{path} changed while Stet was writing (a symlink or another folder took its place)")


def entry(dir_fd: int, name: str) -> os.stat_result | None:
    """What is at `name` in the folder (not following a symlink); None when nothing is."""
    try:
        return os.lstat(name, dir_fd=dir_fd)
    except FileNotFoundError:
        return None


def open_file(dir_fd: int, name: str, where: str) -> tuple[int, os.stat_result] | None:
    """A read handle on the regular file `name` and its stat; None when there is none.

    Never blocks (O_NONBLOCK: a FIFO opens at once and is refused) and never follows a
    symlink. Raises SymlinkOnPath or NotAFile for anything but a regular file."""
    try:
        fd = os.open(name, _FILE, dir_fd=dir_fd)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise SymlinkOnPath(f"{where} is a symlink: Stet does not follow symlinks inside the workspace") from None
        if exc.errno in (errno.ENXIO, errno.EISDIR):  # a socket, a folder opened for reading
            raise _refusal(dir_fd, name, where, exc) from None
        raise
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise NotAFile(f"{where} is {_kind(st.st_mode)}, not a regular file")
    return fd, st


def read_open(fd: int, st: os.stat_result, where: str, limit: int | None = None) -> bytes:
    """The content behind a handle from `open_file`, refused (TooLarge) past `limit` bytes: a
    file larger by its size is not read at all, one that grows while being read stops there."""
    if limit is not None and st.st_size > limit:
        raise TooLarge(f"{where} holds {st.st_size} bytes; the limit is {limit}")
    chunks: list[bytes] = []
    total = 0
    while True:
        chunk = os.read(fd, 1 << 20 if limit is None else min(1 << 20, limit - total + 1))
        if not chunk:
            return b"".join(chunks)
        total += len(chunk)
        if limit is not None and total > limit:  # it grew while being read
            raise TooLarge(f"{where} holds more than {limit} bytes; the limit is {limit}")
        chunks.append(chunk)


def read_file(path: str, limit: int | None = None) -> bytes | None:
    """The bytes of the regular file `path`, None when it (or its folder) does not exist.

    Raises SymlinkOnPath / NotAFile as the module says."""
    found = read_file_identified(path, limit)
    return None if found is None else found[0]


def read_file_identified(path: str, limit: int | None = None) -> tuple[bytes, tuple[int, int]] | None:
    """`read_file`, with the (device, inode) read from: give it to `write_file(expect=...)` so
    that a file replaced meanwhile is not written over."""
    try:
        dir_fd = open_folder(os.path.dirname(path), final=False)
    except FileNotFoundError:
        return None
    try:
        opened = open_file(dir_fd, os.path.basename(path), path)
    finally:
        os.close(dir_fd)
    if opened is None:
        return None
    fd, st = opened
    try:
        return read_open(fd, st, path, limit), (st.st_dev, st.st_ino)
    finally:
        os.close(fd)


def temp_name(name: str) -> str:
    """A temp file's name beside `name`: `.NAME.stet-tmp-RAND-TAG`, TAG a checksum of the rest."""
    rand = secrets.token_hex(8)
    return f".{name}{TEMP_MARK}{rand}-{_tag(name, rand)}"


def _tag(base: str, rand: str) -> str:
    return hashlib.sha256(f"stet-tmp\0{base}\0{rand}".encode("utf-8", "surrogateescape")).hexdigest()[:8]


def is_temp_name(name: str) -> bool:
    """Is `name` one of Stet's temp files (its checksum matches), not a look-alike?"""
    m = _TEMP.match(name)
    return m is not None and _tag(m["base"], m["rand"]) == m["tag"]


def write_file(
    path: str,
    data: bytes,
    *,
    create_folders: bool = False,
    expect: tuple[int, int] | None = None,
    fresh: bool = False,
) -> tuple[int, int]:
    """Make `path` hold `data`, atomically, inside the workspace whatever happens meanwhile.
    Returns the written file's (size, mtime_ns), taken from it before it replaced the old one
    (a rename keeps them): the stamp of a file Stet wrote itself needs no second look.

    An existing file keeps its mode, owner, group and extended attributes; a new one gets
    the default mode (0666 less the caller's umask: workspace/modes.py) and is never written over something that appeared
    meanwhile. `expect` is the (device, inode) the caller read the file from: if another file
    took its place, nothing is written (SymlinkOnPath). With `fresh` (a file of Stet's own,
    such as an inbox .error), whatever is at `path` - a symlink included, which is replaced,
    not followed - gives way to a new file. Raises as the module says."""
    parent, name = os.path.dirname(path), os.path.basename(path)
    with folder(parent, create=create_folders) as dir_fd:
        before = entry(dir_fd, name)
        if fresh and before is not None and not stat.S_ISDIR(before.st_mode):
            return _replace_own(dir_fd, parent, name, data)
        _check_replaceable(path, before, expect)
        tmp = temp_name(name)
        mode = stat.S_IMODE(before.st_mode) if before is not None else modes.wanted(modes.FILE)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=dir_fd)
        with renaming(dir_fd, tmp):
            try:
                if before is not None:
                    _keep_metadata(dir_fd, name, fd, before, path)
                else:
                    modes.settle(fd, modes.FILE)  # the caller's umask, not this process's
                written = _write_all(fd, data)
            finally:
                os.close(fd)
            recheck(dir_fd, parent)
            now = entry(dir_fd, name)
            if before is None:
                # No file was there: link, which never replaces one that appeared meanwhile.
                os.link(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
                # The file is there now: a temp name someone moved meanwhile is not a failed write.
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(tmp, dir_fd=dir_fd)
            elif now is None or (now.st_dev, now.st_ino) != (before.st_dev, before.st_ino):
                raise Replaced(f"{path} was replaced while Stet was writing it")
            else:
                os.rename(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        return written.st_size, written.st_mtime_ns


def _replace_own(dir_fd: int, parent: str, name: str, data: bytes) -> tuple[int, int]:
    """write_file's `fresh`: a new file of Stet's own takes the place of whatever is there."""
    written = write_new(dir_fd, name, data, before_rename=lambda: recheck(dir_fd, parent))
    return written.st_size, written.st_mtime_ns


def write_new(
    dir_fd: int, name: str, data: bytes, *, before_rename: Callable[[], None] | None = None
) -> os.stat_result:
    """Make `name` in the folder handle hold `data`: a new 0600 file beside it, fsynced, then
    renamed over it (a rename replaces a symlink, never follows it). No one sees it half
    written. Returns the new file's stat, taken before the rename (which keeps it)."""
    tmp = temp_name(name)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=dir_fd)
    with renaming(dir_fd, tmp):
        try:
            written = _write_all(fd, data)
        finally:
            os.close(fd)
        if before_rename is not None:
            before_rename()
        os.rename(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    return written


def _write_all(fd: int, data: bytes) -> os.stat_result:
    """Write all of `data` to the open file, fsync it; its stat once durable."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    os.fsync(fd)
    return os.fstat(fd)


@contextlib.contextmanager
def renaming(dir_fd: int, tmp: str) -> Iterator[None]:
    """The block writes the temp file `tmp` and renames (or links) it into place: should it fail,
    the temp file goes; once it has worked, the folder is synced so the new name lasts."""
    try:
        yield
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp, dir_fd=dir_fd)
        raise
    os.fsync(dir_fd)


def _check_replaceable(path: str, before: os.stat_result | None, expect: tuple[int, int] | None) -> None:
    """What write_file refuses to replace: not a regular file, a file with other names, or
    another file than the one the caller read."""
    if before is not None and not stat.S_ISREG(before.st_mode):
        raise (SymlinkOnPath if stat.S_ISLNK(before.st_mode) else NotAFile)(
            f"{path} is {_kind(before.st_mode)}, not a regular file"
        )
    if before is not None and before.st_nlink > 1:
        raise CannotKeep(
            f"{path} has {before.st_nlink} hard links: replacing it would split it from its other "
            "names. Make this change in the editor, or remove the other links"
        )
    if expect is not None and (before is None or (before.st_dev, before.st_ino) != expect):
        raise Replaced(f"{path} was replaced while Stet was writing it")


def cannot_rewrite(path: str) -> str | None:
    """Why `write_file` would refuse to replace the existing file `path` (a symlink on the way,
    not a regular file, hard links, an owner this process cannot keep), None when nothing
    stands in the way that can be seen without trying (or when there is no file)."""
    try:
        with folder(os.path.dirname(path)) as dir_fd:
            st = entry(dir_fd, os.path.basename(path))
    except FileNotFoundError:
        return None
    except (SymlinkOnPath, NotAFile) as exc:
        return exc.message
    if st is None:
        return None
    if not stat.S_ISREG(st.st_mode):
        return f"{path} is {_kind(st.st_mode)}, not a regular file"
    if st.st_nlink > 1:
        return f"{path} has {st.st_nlink} hard links: replacing it would split it from its other names"
    if os.geteuid() != 0 and st.st_uid != os.geteuid():
        return f"{path} belongs to uid {st.st_uid}: Stet (uid {os.geteuid()}) cannot keep its owner"
    return None


def _keep_metadata(dir_fd: int, name: str, tmp_fd: int, before: os.stat_result, path: str) -> None:
    """Give the temp file the owner, group, mode and extended attributes of the file it replaces."""
    mine = os.fstat(tmp_fd)
    if (mine.st_uid, mine.st_gid) != (before.st_uid, before.st_gid):
        try:
            os.fchown(tmp_fd, before.st_uid, before.st_gid)
        except PermissionError:
            raise CannotKeep(
                f"{path} belongs to uid {before.st_uid} / gid {before.st_gid}; Stet (uid {os.getuid()}) "
                "cannot rewrite it without changing its owner. Make this change in the editor"
            ) from None
    os.fchmod(tmp_fd, stat.S_IMODE(before.st_mode))  # after fchown, which may clear set-id bits
    if not hasattr(os, "listxattr"):
        return
    try:
        src = os.open(name, _FILE, dir_fd=dir_fd)
    except OSError:
        return  # gone meanwhile: the rename is refused later
    try:
        try:
            names = os.listxattr(src)
        except OSError as exc:
            if exc.errno in (errno.ENOTSUP, errno.EOPNOTSUPP):
                return
            raise
        for attr in names:
            value = os.getxattr(src, attr)
            try:
                os.setxattr(tmp_fd, attr, value)
            except OSError:
                try:
                    same = os.getxattr(tmp_fd, attr) == value
                except OSError:
                    same = False
                if not same:
                    raise CannotKeep(
                        f"{path} has the extended attribute {attr}, which Stet cannot copy to the new "
                        "content. Make this change in the editor"
                    ) from None
    finally:
        os.close(src)


def remove_file(path: str, expect: tuple[int, int] | None = None) -> bool:
    """Delete the regular file `path` (the very file `expect` names, if given); False when
    there was none. Raises as the module says."""
    parent, name = os.path.dirname(path), os.path.basename(path)
    try:
        dir_fd = open_folder(parent)
    except FileNotFoundError:
        return False
    try:
        now = entry(dir_fd, name)
        if now is None:
            return False
        if not stat.S_ISREG(now.st_mode):
            raise (SymlinkOnPath if stat.S_ISLNK(now.st_mode) else NotAFile)(
                f"{path} is {_kind(now.st_mode)}, not a regular file"
            )
        if expect is not None and (now.st_dev, now.st_ino) != expect:
            raise Replaced(f"{path} was replaced while Stet was deleting it")
        recheck(dir_fd, parent)
        os.unlink(name, dir_fd=dir_fd)
        os.fsync(dir_fd)
        return True
    finally:
        os.close(dir_fd)


def move_file(src: str, dst: str) -> None:
    """Move the regular file `src` to `dst`, never over another file, both inside folders
    reached without symlinks (missing folders of `dst` are made). Raises FileExistsError
    when something is at `dst`, FileNotFoundError when `src` is gone, else as the module says."""
    src_parent, src_name = os.path.dirname(src), os.path.basename(src)
    dst_parent, dst_name = os.path.dirname(dst), os.path.basename(dst)
    with folder(src_parent) as a, folder(dst_parent, create=True) as b:
        here = entry(a, src_name)
        if here is None:
            raise FileNotFoundError(errno.ENOENT, "no such file", src)
        if not stat.S_ISREG(here.st_mode):
            raise (SymlinkOnPath if stat.S_ISLNK(here.st_mode) else NotAFile)(
                f"{src} is {_kind(here.st_mode)}, not a regular file"
            )
        if entry(b, dst_name) is not None:
            raise FileExistsError(errno.EEXIST, "a file is already there", dst)
        recheck(a, src_parent)
        recheck(b, dst_parent)
        try:
            os.link(src_name, dst_name, src_dir_fd=a, dst_dir_fd=b, follow_symlinks=False)
        except FileExistsError:
            raise
        except OSError as exc:
            if exc.errno not in (errno.EPERM, errno.EXDEV, errno.EMLINK, errno.ENOTSUP, errno.EOPNOTSUPP):
                raise
            # No hard links here: rename, after checking again that nothing is at dst.
            if entry(b, dst_name) is not None:
                raise FileExistsError(errno.EEXIST, "a file is already there", dst) from None
            os.rename(src_name, dst_name, src_dir_fd=a, dst_dir_fd=b)
        else:
            os.unlink(src_name, dir_fd=a)
        os.fsync(b)
        if (os.fstat(a).st_dev, os.fstat(a).st_ino) != (os.fstat(b).st_dev, os.fstat(b).st_ino):
            os.fsync(a)


def move_state(src: str, dst: str) -> str:
    """Where a move of `src` to `dst` stands, seen in one look through a handle on each folder:
    "todo" (a file at src only), "done" (at dst only), "both" (two different entries),
    "neither", or "interrupted" (the same file at both names: a crash between link and unlink,
    now finished by dropping `src`). A missing folder holds nothing; a symlink on the way raises."""
    with contextlib.ExitStack() as stack:
        handles: list[int | None] = []
        for path in (src, dst):
            try:
                handles.append(stack.enter_context(folder(os.path.dirname(path))))
            except FileNotFoundError:
                handles.append(None)
        a, b = handles
        x = entry(a, os.path.basename(src)) if a is not None else None
        y = entry(b, os.path.basename(dst)) if b is not None else None
        if x is not None and y is not None:
            if (x.st_dev, x.st_ino) == (y.st_dev, y.st_ino) and stat.S_ISREG(x.st_mode) and a is not None:
                recheck(a, os.path.dirname(src))
                os.unlink(os.path.basename(src), dir_fd=a)
                os.fsync(a)
                return "interrupted"
            return "both"
        if x is not None:
            return "todo"
        return "done" if y is not None else "neither"


def exists(path: str) -> bool:
    """Is anything at `path` (a file, a folder, a symlink...)? Reached without following symlinks
    on the way; a symlink on the way counts as "something there" (the path is not free)."""
    try:
        with folder(os.path.dirname(path)) as dir_fd:
            return entry(dir_fd, os.path.basename(path)) is not None
    except FileNotFoundError:
        return False
    except (SymlinkOnPath, NotAFile):
        return True


def remove_temp_files(folders: set[str]) -> int:
    """Delete Stet's own temp files a crash left in these folders (and only those); returns how many."""
    removed = 0
    for path in folders:
        try:
            dir_fd = open_folder(path)
        except (OSError, SymlinkOnPath, NotAFile):
            continue
        try:
            for name in os.listdir(dir_fd):
                if not is_temp_name(name):
                    continue
                st = entry(dir_fd, name)
                if st is not None and stat.S_ISREG(st.st_mode):
                    with contextlib.suppress(OSError):
                        os.unlink(name, dir_fd=dir_fd)
                        removed += 1
        finally:
            os.close(dir_fd)
    return removed


def temp_files(folders: set[str]) -> list[str]:
    """Stet's own temp files in these folders (what `remove_temp_files` would delete)."""
    found = []
    for path in sorted(folders):
        try:
            with folder(path) as dir_fd:
                found += [os.path.join(path, n) for n in sorted(os.listdir(dir_fd)) if is_temp_name(n)]
        except (OSError, SymlinkOnPath, NotAFile):
            continue
    return found
