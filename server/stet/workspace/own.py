"""Stet's own files: what it keeps in its folder (`.stet/`, or the folder of a store given with
--db) besides the database - the MCP token, the locks, the snapshots' contents, the inbox.

Anyone who can write into the workspace can plant something there (a cloned repository, an
unpacked archive, an agent): a symlink or a hard link to a file of the user's would have Stet
read, chmod or write that file. So everything here is reached without following a symlink
(the folder `.stet` itself included; see safe.py), and trusted only if Stet could have made
it: a real folder or a regular file, owned by this user, with one name (a hard link is the
same attack as a symlink); a secret (the token) also readable by its owner only. Anything
else is refused - never followed, chmodded, read or removed - with `NotStets`, whose message
names it and says what to do. Folders Stet makes here are 0700.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Callable, Iterator

from ..errors import StoreUnavailable
from . import safe

try:
    import fcntl
except ImportError:  # not POSIX
    fcntl = None  # type: ignore[assignment]

_OPEN = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_SUB = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
STORE_DIR = ".stet"


class NotStets(StoreUnavailable):
    """Something in Stet's folder that Stet did not make: a symlink, a hard link, a file of
    another user, a secret others may read."""


def _what(st: os.stat_result) -> str:
    if stat.S_ISLNK(st.st_mode):
        return "a symlink"
    if stat.S_ISDIR(st.st_mode):
        return "a folder"
    if stat.S_ISREG(st.st_mode):
        return "a file"
    return "a FIFO, device or socket"


def _problem(st: os.stat_result, where: str, *, folder: bool = False, secret: bool = False) -> str | None:
    """Why `st` (taken without following a symlink) is not something Stet made at `where`."""
    wanted = stat.S_ISDIR(st.st_mode) if folder else stat.S_ISREG(st.st_mode)
    if not wanted:
        return (
            f"{where} is {_what(st)}, not the {'folder' if folder else 'file'} Stet keeps there: Stet follows no "
            "link in its own folder and uses nothing it did not make. Remove it; Stet makes its own again"
        )
    if st.st_uid != os.geteuid():
        return (
            f"{where} belongs to uid {st.st_uid}, not to you (uid {os.geteuid()}): Stet did not make it and does "
            "not use it. Remove it; Stet makes its own again"
        )
    if not folder and st.st_nlink > 1:
        return (
            f"{where} has {st.st_nlink} hard links: it is also another file, which Stet must not read or write. "
            "Remove it; Stet makes its own again"
        )
    if secret and stat.S_IMODE(st.st_mode) & 0o077:
        return (
            f"{where} has mode {stat.S_IMODE(st.st_mode):04o}: others may read it, so it is no secret (Stet makes "
            "it 0600). Remove it; Stet makes a new one"
        )
    return None


def check(st: os.stat_result, where: str, *, folder: bool = False, secret: bool = False) -> None:
    """Raise NotStets when `st` is not what Stet makes at `where` (see the module)."""
    why = _problem(st, where, folder=folder, secret=secret)
    if why is not None:
        raise NotStets(why)


def home_path(home: str) -> str:
    """The folder `home` with every symlink above it resolved: the workspace's path may run
    through symlinks (/tmp on macOS), `.stet` itself may not. A store folder of another name
    (given with --db) is the user's choice and is taken as it resolves."""
    if os.path.basename(home) != STORE_DIR:
        return os.path.realpath(home)
    return os.path.join(os.path.realpath(os.path.dirname(home)), STORE_DIR)


def _narrow(fd: int) -> None:
    """0700: an older Stet may have made the folder wider."""
    if stat.S_IMODE(os.fstat(fd).st_mode) & 0o077:
        os.fchmod(fd, 0o700)


def open_home(home: str, *, create: bool = True) -> int:
    """A handle on Stet's folder `home` (made 0700 when missing), checked as the module says.
    Raises NotStets, or FileNotFoundError when it is missing and not to be made."""
    path = home_path(home)
    try:
        fd = safe.open_folder(path, create=create, mode=0o700)
    except (safe.SymlinkOnPath, safe.NotAFile) as exc:
        raise NotStets(
            f"{exc.message}: Stet keeps its own files in a real folder. Remove it; Stet makes its own"
        ) from None
    try:
        if os.path.basename(path) == STORE_DIR:  # a folder given with --db is the user's, as it is
            check(os.fstat(fd), path, folder=True)
            _narrow(fd)
        return fd
    except BaseException:
        os.close(fd)
        raise


def open_sub(parent: int, name: str, where: str, *, create: bool = True) -> int:
    """A handle on the folder `name` inside the handle `parent` (made 0700 when missing)."""
    try:
        fd = os.open(name, _SUB, dir_fd=parent)
    except FileNotFoundError:
        if not create:
            raise
        with contextlib.suppress(FileExistsError):  # made meanwhile: checked below like any other
            os.mkdir(name, 0o700, dir_fd=parent)
        return open_sub(parent, name, where, create=False)
    except OSError as exc:
        if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
            raise
        check(os.lstat(name, dir_fd=parent), where, folder=True)
        raise
    try:
        check(os.fstat(fd), where, folder=True)
        _narrow(fd)
        return fd
    except BaseException:
        os.close(fd)
        raise


def open_path(home: str, *names: str, create: bool = True) -> int:
    """A handle on `home/names...`, every level checked (see `open_home`, `open_sub`); the
    caller closes it. Raises NotStets, or FileNotFoundError for a missing one not to be made."""
    fd = open_home(home, create=create)
    where = home_path(home)
    try:
        for name in names:
            where = os.path.join(where, name)
            sub = open_sub(fd, name, where, create=create)
            os.close(fd)
            fd = sub
        return fd
    except BaseException:
        os.close(fd)
        raise


@contextlib.contextmanager
def folder(home: str, *names: str, create: bool = True) -> Iterator[int]:
    """`open_path` as a context manager: the handle is closed when the block ends."""
    fd = open_path(home, *names, create=create)
    try:
        yield fd
    finally:
        os.close(fd)


def make(home: str, *names: str) -> None:
    """Make (or check) the folder `home/names...` as `folder` does."""
    with folder(home, *names):
        pass


def open_file(dir_fd: int, name: str, where: str, flags: int, *, secret: bool = False) -> int | None:
    """`name` in the folder handle, opened with `flags` (O_CREAT makes it 0600) without
    following a symlink or blocking, and checked; None when it is missing (without O_CREAT)."""
    try:
        fd = os.open(name, flags | _OPEN, 0o600, dir_fd=dir_fd)
    except FileNotFoundError:
        return None
    except OSError as exc:
        try:
            st = os.lstat(name, dir_fd=dir_fd)
        except OSError:
            raise exc from None
        check(st, where, secret=secret)
        raise
    try:
        check(os.fstat(fd), where, secret=secret)
        return fd
    except BaseException:
        os.close(fd)
        raise


def read_file(dir_fd: int, name: str, where: str, limit: int | None, *, secret: bool = False) -> bytes | None:
    """The bytes of Stet's own file `name` (None: missing), refused past `limit` bytes."""
    fd = open_file(dir_fd, name, where, os.O_RDONLY, secret=secret)
    if fd is None:
        return None
    try:
        return safe.read_open(fd, os.fstat(fd), where, limit)
    finally:
        os.close(fd)


def place(dir_fd: int, name: str, data: bytes) -> None:
    """Make `name` in the folder handle hold `data`, atomically (see safe.write_new)."""
    safe.write_new(dir_fd, name, data)


def secret(home: str, name: str, make: Callable[[], str], accept: Callable[[str], bool]) -> str:
    """The secret kept in `home/name`: made with `make` (0600, written whole before it appears)
    the first time, read back after, under a lock on the folder. One that is not Stet's (see
    the module), or that `accept` refuses, raises NotStets."""
    where = os.path.join(home_path(home), name)
    with folder(home) as dir_fd:
        if fcntl is not None:  # one maker at a time: two servers starting together share one token
            fcntl.flock(dir_fd, fcntl.LOCK_EX)  # released when the handle closes
        data = read_file(dir_fd, name, where, 4096, secret=True)
        if data is None:
            made = make()
            place(dir_fd, name, (made + "\n").encode("ascii"))
            return made
    text = data.decode("ascii", "replace").strip()
    if not accept(text):
        raise NotStets(f"{where} holds no usable token; remove it and Stet makes a new one")
    return text


def new_token() -> str:
    return secrets.token_urlsafe(32)
