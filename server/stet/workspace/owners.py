"""Which process owns an edit that lives in an editor's buffer, and is it still alive.

Several servers share one store (one per editor window). An edit applied into window A's
unsaved buffer is A's to settle: another server must not write it to disk while A runs,
only once A is gone (crashed, closed). A token names a process on this machine; the
process start time in it guards against a recycled pid.
"""

from __future__ import annotations

import os
import socket


def _start_time(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            # The command name (field 2) may hold spaces: count fields after its closing ")".
            return f.read().rsplit(b")", 1)[1].split()[19].decode()
    except (OSError, IndexError):
        return "?"


_TOKEN = f"{socket.gethostname()}:{os.getpid()}:{_start_time(os.getpid())}"


def token() -> str:
    return _TOKEN


def alive(owner: str | None) -> bool:
    """Is the process named by `owner` still running? Unknown owners count as alive."""
    if not owner:
        return False
    try:
        host, pid_text, started = owner.rsplit(":", 2)
        pid = int(pid_text)
    except ValueError:
        return False
    if host != socket.gethostname():
        return True  # another machine: we cannot tell, so we do not touch its buffers
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return started == "?" or _start_time(pid) in (started, "?")
