"""The inbox: proposals dropped as files by agents that cannot run the CLI.

`.stet/inbox/ID.json` (a `stet/propose` params object) or `.stet/inbox/ID.patch` (a unified
diff) is proposed with proposal id ID, then moved to `done/`; one the review refuses goes to
`failed/` beside `ID.error`, which says why. Exactly once: the proposal commits before the
file moves, and proposing the same id with the same content again adds nothing, so a crash
between the two only means the file is proposed again (a no-op) at the next start.

Only complete files are read: temp and hidden names are ignored (write `ID.patch.tmp`, then
rename), events are debounced, and a file that does not parse is retried once after a short
delay (it may still have been being written), then failed.

The inbox is a door anyone who can write into the workspace can knock on, so it trusts
nothing it finds: its folders are reached without following symlinks (a symlinked inbox,
`done/` or `failed/` is refused, never written or moved into, and so is one of another user),
a file is read off the event loop only if it is a regular file (opened with O_NOFOLLOW |
O_NONBLOCK: a FIFO or a symlink to one cannot block it, a device cannot feed it forever) no
larger than twice the proposal limit, and its folders are created 0700.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..agents import intake
from ..domain import patches
from ..errors import InvalidParams, StetError, StoreUnavailable
from ..faults import fault
from ..review import Review
from ..workspace import own, safe

if TYPE_CHECKING:
    from watchdog.events import FileSystemEvent

    from .watcher import Watcher

log = logging.getLogger(__name__)

SETTLE = 0.15  # seconds without events before a file is read
RETRY_DELAY = float(os.environ.get("STET_INBOX_RETRY", "1.0"))
STORE_RETRY = 5.0  # seconds before trying again when the store cannot be written
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@+-]{0,199}\.(json|patch)$")


def inbox_folder(db_path: str) -> str:
    return os.path.join(os.path.dirname(os.path.abspath(db_path)), "inbox")


META = ".meta.json"  # ID.meta.json: the task, agent and message of ID.patch (written before it)


def is_candidate(name: str) -> bool:
    """A complete proposal file's name: ID.json or ID.patch, no temp or hidden names (and not
    the sidecar ID.meta.json of a patch, which is read with its patch)."""
    return bool(_NAME.match(name)) and not name.startswith(".") and not name.endswith(META)


class Unparsable(Exception):
    pass


class Inbox:
    def __init__(self, folder: str, review: Review, warn: Callable[[str], None] | None = None) -> None:
        self.folder = folder
        self.review = review
        self.warn = warn or (lambda message: log.warning("%s", message))
        self.done = os.path.join(folder, "done")
        self.failed = os.path.join(folder, "failed")
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._attempts: dict[str, int] = {}
        self._lock = asyncio.Lock()
        self._tasks: set[asyncio.Task[Any]] = set()
        self.ingested = 0

    def prepare(self) -> None:
        """Make the folders (0700), or check them: raises a StetError (a symlink, another
        user's folder...) or an OSError when the inbox cannot be used safely."""
        home = os.path.dirname(self.folder)
        for names in ((), ("done",), ("failed",)):
            own.make(home, os.path.basename(self.folder), *names)

    async def start(self, watcher: Watcher) -> None:
        """Make the folders and watch; raises as `prepare` does (then it is not used at all)."""
        self.prepare()
        watcher.watch(self.folder, self._on_event)
        # Scanned after the watch is in place, so a file arriving now is seen one way or the other.
        with safe.folder(self.folder) as fd:
            names = sorted(os.listdir(fd))
        for name in names:  # what arrived while no server ran
            self._schedule(name, 0)

    def stop(self) -> None:
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
        for task in list(self._tasks):
            task.cancel()

    def _on_event(self, event: FileSystemEvent) -> None:
        if event.is_directory:
            return
        for path in (getattr(event, "dest_path", None), event.src_path):
            if path and os.path.dirname(os.path.abspath(path)) == os.path.abspath(self.folder):
                name = os.fsdecode(os.path.basename(path))  # watchdog types paths as str | bytes
                if event.event_type == "closed":  # a writer closed it: complete unless it is still wrong
                    self._schedule(name, 0.02)
                elif event.event_type in ("created", "modified", "moved"):
                    self._schedule(name, SETTLE)
                # opened / closed_no_write / deleted: our own reads and moves, nothing new

    def _schedule(self, name: str, delay: float) -> None:
        if not is_candidate(name):
            return
        old = self._timers.pop(name, None)
        if old:
            old.cancel()
        loop = asyncio.get_running_loop()
        self._timers[name] = loop.call_later(delay, self._spawn, name)

    def _spawn(self, name: str) -> None:
        self._timers.pop(name, None)
        task = asyncio.ensure_future(self._process(name))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def drain(self) -> list[str]:
        """Ingest every file waiting now, once (no watching, no retry: `stet doctor --fix`).
        Returns the names left in place because they do not parse (yet)."""
        self.prepare()
        with safe.folder(self.folder) as fd:
            names = sorted(os.listdir(fd))
        left = []
        for name in names:
            if is_candidate(name) and not await self._process(name, retry=False):
                left.append(name)
        return left

    def _read(self, name: str, limit: int | None = None) -> bytes | None:
        """The file's bytes (None: gone), read without following a symlink or blocking."""
        limit = limit or 2 * self.review.state.limits.max_bytes
        with safe.folder(self.folder) as fd:
            opened = safe.open_file(fd, name, os.path.join(self.folder, name))
            if opened is None:
                return None
            file_fd, st = opened
            try:
                return safe.read_open(file_fd, st, name, limit)
            finally:
                os.close(file_fd)

    async def _process(self, name: str, retry: bool = True) -> bool:
        """Ingest one file; False when it was left in place (does not parse, not retried)."""
        async with self._lock:
            try:
                data = await asyncio.to_thread(self._read, name)
            except StetError as exc:  # a symlink, a FIFO, a device, too large: never read
                await self._fail(name, f"{exc.message}: the inbox takes regular files only")
                return True
            except OSError as exc:
                await self._fail(name, f"cannot read the file: {exc.strerror or exc}")
                return True
            if data is None:
                return True  # another server took it
            stem, kind = name.rsplit(".", 1)
            try:
                text = self._parse(kind, data)
                await self._propose(kind, stem, text)
            except Unparsable as exc:
                if not retry:
                    return False
                self._attempts[name] = self._attempts.get(name, 0) + 1
                if self._attempts[name] < 2:
                    log.info("inbox: %s does not parse yet (%s); retrying in %ss", name, exc, RETRY_DELAY)
                    self._schedule(name, RETRY_DELAY)
                else:
                    await self._fail(name, str(exc))
                return True
            except StoreUnavailable as exc:  # not the proposal's fault: keep it and try again later
                log.warning("inbox: %s waits: %s", name, exc)
                if not retry:
                    raise
                self._schedule(name, STORE_RETRY)
                return True
            except StetError as exc:
                await self._fail(name, f"{exc.name}: {exc.message}")
                return True
            except Exception as exc:  # a bug must not stop the inbox; the file keeps the evidence
                log.exception("inbox: %s", name)
                await self._fail(name, f"internal error: {exc!r}")
                return True
            fault("inbox:after-propose")
            self._attempts.pop(name, None)
            self.ingested += 1
            await asyncio.to_thread(self._move, name, self.done)
            if kind == "patch":
                await asyncio.to_thread(self._move, stem + META, self.done)
            return True

    @staticmethod
    def _parse(kind: str, data: bytes) -> str:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise Unparsable(f"not UTF-8 text (byte {exc.start})") from None
        try:
            if kind == "json":
                json.loads(text)
            else:
                patches.parse(text)
        except json.JSONDecodeError as exc:
            raise Unparsable(f"not JSON: line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
        except patches.PatchError as exc:
            raise Unparsable(f"not a unified diff: {exc}") from None
        return text

    async def _propose(self, kind: str, stem: str, text: str) -> None:
        if kind == "json":
            await intake.propose_params(self.review, json.loads(text), stem)
        else:
            meta = self._meta(stem)
            await intake.propose_patch(
                self.review,
                text,
                stem,
                task_id=meta.get("taskId"),
                agent=meta.get("agent"),
                message=meta.get("message"),
            )

    def _meta(self, stem: str) -> dict[str, Any]:
        """The sidecar ID.meta.json of a patch: {"taskId"?, "agent"?, "message"?} (strings)."""
        try:  # like the proposal itself: a regular file only, never followed or waited on
            raw = self._read(stem + META, limit=1 << 20)
            if raw is None:
                return {}
            data = json.loads(raw.decode("utf-8"))
        except StetError as exc:
            raise InvalidParams(f"{stem + META}: {exc.message}: the inbox takes regular files only") from None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise InvalidParams(f"{stem + META}: not a JSON object: {exc}") from None
        if not isinstance(data, dict) or set(data) - {"taskId", "agent", "message"}:
            raise InvalidParams(f"{stem + META} must be an object with only taskId, agent and message")
        if not all(isinstance(v, str) for v in data.values()):
            raise InvalidParams(f"{stem + META}: taskId, agent and message are strings")
        return data

    def _move(self, name: str, folder: str) -> None:
        """Move the entry `name` (whatever it is: a symlink moves as a symlink) into `folder`,
        both folders reached without symlinks and checked again just before the rename."""
        try:
            with safe.folder(self.folder) as src, safe.folder(folder) as dst:
                if safe.entry(src, name) is None:
                    return  # another server moved it first
                safe.recheck(src, self.folder)
                safe.recheck(dst, folder)
                os.replace(name, name, src_dir_fd=src, dst_dir_fd=dst)
        except FileNotFoundError:
            pass  # another server moved it first
        except (StetError, OSError) as exc:
            self.warn(f"Stet's inbox cannot move {name} into {folder}: {getattr(exc, 'message', exc)}")

    async def _fail(self, name: str, why: str) -> None:
        log.warning("inbox: %s failed: %s", name, why)
        self._attempts.pop(name, None)
        stem = name.rsplit(".", 1)[0]
        with safe.folder(self.folder) as fd:
            if safe.entry(fd, name) is None:
                return
        try:
            await asyncio.to_thread(
                safe.write_file,
                os.path.join(self.failed, stem + ".error"),
                (why.rstrip() + "\n").encode("utf-8"),
                fresh=True,
            )
        except (StetError, OSError) as exc:
            self.warn(f"Stet's inbox cannot record why {name} failed: {getattr(exc, 'message', exc)}")
            return
        await asyncio.to_thread(self._move, name, self.failed)
        if name.endswith(".patch"):
            await asyncio.to_thread(self._move, stem + META, self.failed)
