"""The input a command reads (`propose --patch FILE`, `--edit FILE`, `-` for stdin, a hook's
event on stdin): read in the caller's own process, bounded, never blocked on.

A file named on the command line is opened only if it is a regular file (checked before opening
and again on the handle, opened with O_NONBLOCK: a FIFO nobody writes can never hold the process),
except a name for one of the caller's own descriptors (`/dev/stdin`, `/dev/fd/N` as `<(git diff)`
gives, `/proc/self/fd/N`): that is read like stdin, whatever it is. The thin client reads these
before handing a call to the resident (stet/resident/), which has other descriptors and must never
wait on a caller's pipe: what it read travels with the call (cli/call.py `Call.inputs`).

Light: the thin client imports it (os, sys and stat are loaded at Python's start)."""

from __future__ import annotations

import os
import stat
import sys

TYPE_CHECKING = False  # no `typing` in the thin client
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import BinaryIO

    from .call import Call

_OPTIONS = ("--patch", "--edit")  # propose's options that name an input ('-': stdin)
_OWN = ("/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/")


class Unreadable(Exception):
    """Why a named input cannot be read (the message, as `cannot read NAME: ...` ends)."""


class Oversize(Exception):
    """An input of more bytes than its limit (none of it kept)."""


def names(argv: list[str]) -> list[str]:
    """The inputs a `propose` command line names, in any spelling argparse takes (`--patch F`,
    `--patch=F`, an abbreviation such as `--pa F`); '-' is stdin."""
    found: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            break
        option, eq, value = arg.partition("=")
        if len(option) > 2 and option.startswith("--") and any(o.startswith(option) for o in _OPTIONS):
            if not eq:
                i += 1
                if i == len(argv):
                    break
                value = argv[i]
            found.append(value)
        i += 1
    return found


def own_descriptor(name: str) -> bool:
    """Whether `name` means one of the calling process's open descriptors."""
    if name == "/dev/stdin":
        return True
    return any(name.startswith(p) and name[len(p) :].isdigit() for p in _OWN)


def take(call: Call, name: str, most: int) -> bytes:
    """The input `name` names ('-': the call's stdin) as the call's caller read it (`call.inputs`:
    the content, or the Unreadable or Oversize it met), else read here, a relative name from the
    call's folder. Raises Unreadable, or Oversize past `most` bytes."""
    got = call.inputs.get(name)
    if got is None:
        got = stream(call.stdin, most) if name == "-" else read(call.path(name), most)
    if isinstance(got, Exception):
        raise got
    return got


def read(name: str, most: int) -> bytes:
    """The content of the input file `name`. Raises Unreadable, or Oversize past `most` bytes."""
    own = own_descriptor(name)
    try:
        if not own:
            _regular(os.stat(name).st_mode)  # a device is not even opened
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as exc:
        raise Unreadable(exc.strerror or str(exc)) from None
    try:
        st = os.fstat(fd)
        if own:
            os.set_blocking(fd, True)  # the caller's own pipe: read as stdin is, to its end
        else:
            _regular(st.st_mode)  # what is there now: it may have been swapped since the stat
            if st.st_size > most:
                raise Oversize()  # larger by its size: not read at all
        return _bounded(lambda n: os.read(fd, n), most)
    except OSError as exc:
        raise Unreadable(exc.strerror or str(exc)) from None
    finally:
        os.close(fd)


def stdin(most: int) -> bytes:
    """This process's stdin (nothing when it has none). Raises Unreadable, or Oversize past
    `most` bytes."""
    return stream(None if sys.stdin is None else sys.stdin.buffer, most)


def stream(source: BinaryIO | None, most: int) -> bytes:
    """What `source` holds to its end (nothing when there is none). Raises Unreadable, or
    Oversize past `most` bytes."""
    if source is None:
        return b""
    try:
        return _bounded(source.read, most)
    except OSError as exc:
        raise Unreadable(exc.strerror or str(exc)) from None


def _regular(mode: int) -> None:
    if not stat.S_ISREG(mode):
        raise Unreadable(f"{_kind(mode)}, not a regular file")


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a file"


def _bounded(read: Callable[[int], bytes], most: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while chunk := read(min(1 << 20, most + 1 - size)):
        size += len(chunk)
        if size > most:
            raise Oversize()
        chunks.append(chunk)
    return b"".join(chunks)
