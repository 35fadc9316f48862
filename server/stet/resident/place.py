"""Where a call's resident lives and whether what is there is its own; light enough for the
thin client (os and sys only, the operations table, which imports nothing, and the store's
answers about its engine, store/engines.py, which imports os).

The resident of a workspace listens on `.stet/resident.sock` of the workspace's first root,
beside its pid file. Anyone who can write into the workspace can plant something there, so
neither side trusts a path: the folder is opened without following a symlink and must be a
0700 folder of this user; the socket must be a socket of this user, reached through that
open folder (`/proc/self/fd/N/...`, which also keeps the address short); and each side checks
the other's uid on the connection itself."""

import os

from ..operations import CLI
from ..store.engines import engine_of

# The calls worth a resident (the operations table's `resident`); `run` has the resident do the
# two halves around its agent (run_phase).
ROUTED = frozenset(name for name, op in CLI.items() if op.resident)
# The routed calls that only read the review: a resident answers them side by side.
READS = frozenset(name for name in ROUTED if not CLI[name].mutating)


def command_of(argv: list[str]) -> str | None:
    """The subcommand a command line names (its first word that is not an option)."""
    return next((a for a in argv if not a.startswith("-")), None)


def reads_only(argv: list[str]) -> bool:
    """Whether the call only reads: a routed call that changes nothing, or `resident --status`."""
    command = command_of(argv)
    return command in READS or (command == "resident" and "--status" in argv)


SOCKET = "resident.sock"
PIDFILE = "resident.pid"
LOG = "resident.log"
STORE_DIR = ".stet"
_IFMT, _IFDIR, _IFSOCK = 0o170000, 0o040000, 0o140000
# Set by tests and tools, not a part of what a command does: a resident serves calls that
# differ only in these.
_LOOSE = ("STET_FAULT", "STET_RESIDENT")


def run_phase(argv: list[str]) -> bool:
    """Whether a call is a half of an in-place `stet run` (`run --phase begin|finish ...`, as
    resident/run.py asks): the resident answers those, never a whole run (it holds a terminal)."""
    at = next((n for n, a in enumerate(argv) if not a.startswith("-")), None)
    return at is not None and argv[at] == "run" and argv[at + 1 : at + 2] == ["--phase"]


def home_of_call(argv: list[str], cwd: str, env: dict[str, str] | os._Environ[str]) -> str | None:
    """The `.stet` folder whose resident a call goes to, found as `stet` finds its store
    (cli/locate.py, `home_of`); None when there is no store to find."""
    options = _options(argv)
    db = options.get("--db", [None])[-1] or env.get("STET_DB")
    roots = options.get("--root", [])
    if db and engine_of(db).shared:
        return home_of(db, [roots[0] if roots else _up_to(cwd, ".git") or cwd])
    if db:
        return home_of(os.path.abspath(db), roots)
    found = _up_to(cwd, os.path.join(STORE_DIR, "stet.db"))
    return os.path.join(found, STORE_DIR) if found else None


def home_of(db: str, roots: list[str]) -> str | None:
    """Where the resident of the store `db` for `roots` lives: beside an SQLite store in its
    `.stet/`; for a PostgreSQL review, in the first root's `.stet/` (one per checkout)."""
    return engine_of(db).home(db, roots[0] if roots else "")


def store_options(argv: list[str]) -> list[str]:
    """The call's --db and --root options, to start its resident with."""
    return [arg for name, values in _options(argv).items() for value in values for arg in (name, value)]


def _options(argv: list[str]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    i = 0
    while i < len(argv):
        arg = argv[i]
        name, eq, value = arg.partition("=")
        if name in ("--db", "--root"):
            if not eq:
                value = argv[i + 1] if i + 1 < len(argv) else ""
                i += 1
            found.setdefault(name, []).append(value)
        i += 1
    return found


def _up_to(start: str, name: str) -> str | None:
    folder = os.path.realpath(start)
    while True:
        if os.path.exists(os.path.join(folder, name)):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def env_key(env: dict[str, str] | os._Environ[str]) -> bytes:
    """The settings a resident serves: calls with other STET_* settings run in their own process."""
    kept = sorted(f"{k}={v}" for k, v in env.items() if k.startswith("STET_") and not k.startswith(_LOOSE))
    return "\0".join(kept).encode("utf-8", "surrogateescape")


def open_folder(home: str) -> int:
    """A handle on `home`, never through a symlink. Raises OSError (missing), or ValueError
    saying why it is not a folder this resident may use."""
    fd = os.open(home, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    st = os.fstat(fd)
    why = None
    if st.st_uid != os.geteuid():
        why = f"{home} belongs to uid {st.st_uid}, not to you"
    elif st.st_mode & 0o077:
        why = f"{home} has mode {st.st_mode & 0o777:04o}: others may enter it (Stet makes it 0700)"
    if why:
        os.close(fd)
        raise ValueError(why)
    return fd


def socket_problem(folder: int, home: str) -> str | None:
    """Why the socket in the open folder is not a resident's of this user (None: it may be).
    Raises FileNotFoundError when there is none."""
    st = os.lstat(SOCKET, dir_fd=folder)
    where = os.path.join(home, SOCKET)
    if st.st_mode & _IFMT != _IFSOCK:
        return f"{where} is not a socket (a symlink or a file someone put there): Stet does not use it"
    if st.st_uid != os.geteuid():
        return f"{where} belongs to uid {st.st_uid}, not to you: Stet does not use it"
    return None


def address(folder: int, home: str) -> str:
    """The socket's address through the open folder: a swapped folder cannot redirect it, and
    a deep workspace cannot make it longer than a socket address may be."""
    if os.path.isdir(f"/proc/self/fd/{folder}"):
        return f"/proc/self/fd/{folder}/{SOCKET}"
    return os.path.join(home, SOCKET)
