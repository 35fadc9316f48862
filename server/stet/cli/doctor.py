"""`stet doctor`: what is wrong with a workspace's review, and what to do about each thing."""

from __future__ import annotations

import asyncio
import os
import shlex
import stat

from ..domain.anchor import LineIndex, locate
from ..domain.inert import inert
from ..domain.shapes import JSON  # at run time too: Findings subclasses list[JSON]
from ..domain.status import Status
from ..domain.text import split_lines
from ..errors import StetError
from ..review import Review
from ..runtime.inbox import Inbox, is_candidate
from ..workspace import safe
from ..workspace.files import read_bytes, read_text, temp_files
from .output import print_json
from .session import opened

TYPE_CHECKING = False  # types for mypy only
if TYPE_CHECKING:
    import argparse

    from ..review.effects import EffectRow
    from .call import Call


class Findings(list[JSON]):
    """What the doctor found, in order: each a level, what, what to do, and data."""

    def add(self, level: str, what: str, todo: str | None = None, **data: object) -> None:
        self.append({"level": level, "what": what, "todo": todo, **data})


async def examine(review: Review, fix: bool = False) -> JSON:
    store = review.require_store()
    f = Findings()
    await _check_store(review, f)
    if fix:
        await _recover(review, f)
    await _check_temps(review, f)
    pending = await _check_effects(review, f)
    await _check_hunks(review, f, pending)
    await _check_inbox(review, f, fix)
    await _check_leftovers(review, f)
    return {"db": store.path, "root": review.ws.roots[0], "findings": list(f)}


async def _check_store(review: Review, f: Findings) -> None:
    store = review.require_store()
    problems = [r for r in await store.integrity() if r != "ok"]
    if problems:
        f.add(
            "problem",
            f"the database {store.path} fails PRAGMA integrity_check: {'; '.join(problems[:3])}",
            "copy the .stet folder aside, then start the editor (or `stet serve`): Stet moves a damaged "
            "database into .stet/quarantine/ and starts a fresh one; nothing is deleted",
        )
    else:
        f.add("ok", f"database {store.path}: integrity_check ok, last lsn {await store.last_lsn()}")


async def _recover(review: Review, f: Findings) -> None:
    try:
        summary = await review.recover()
    except StetError as exc:
        f.add("problem", f"recovery could not finish: {exc.message}", "see the other findings; fix, then run it again")
    except Exception as exc:  # never a traceback: say it, with what to do
        f.add(
            "problem",
            f"recovery failed: {exc!r}",
            "please report this as a bug (with `stet doctor --json`); the review store was not changed by it",
        )
    else:
        f.add(
            "fixed",
            f"recovery ran: pending effects finished, hunks re-checked against the files ({summary.duration_ms} ms)",
        )


async def _check_temps(review: Review, f: Findings) -> None:
    temps = await asyncio.to_thread(temp_files, review.state.hunk_folders())
    if temps:
        f.add(
            "warn",
            f"{len(temps)} temp file(s) left by an interrupted write: {', '.join(temps[:5])}",
            "run `stet doctor --fix` (or restart the editor): they are removed at start",
            paths=temps,
        )
    else:
        f.add("ok", "no temp files left by interrupted writes")


async def _check_effects(review: Review, f: Findings) -> list[EffectRow]:
    """The accepted edits not yet written to closed files (returned), and those an editor settles."""
    store = review.require_store()
    effects = await store.open_effects()
    pending = [e for e in effects if e.state == "pending" and getattr(e, "target", "file") == "file"]
    # Meant for an editor's buffer, or sitting in one unsaved: the editor settles them.
    unsaved = [e for e in effects if e not in pending]
    if pending:
        names = ", ".join(f"{e.action} {e.uri} (lsn {e.lsn}, {e.attempts} attempt(s))" for e in pending[:5])
        f.add(
            "warn",
            f"{len(pending)} accepted edit(s) not yet written: {names}",
            "a running editor retries them when the file changes; otherwise restart the editor or run "
            "`stet doctor --fix`, which writes each exactly once",
            effects=[{"lsn": e.lsn, "uri": e.uri, "action": e.action, "attempts": e.attempts} for e in pending],
        )
    else:
        f.add("ok", "no accepted edit waiting to be written")
    if unsaved:
        f.add(
            "warn",
            f"{len(unsaved)} accepted edit(s) meant for an editor's buffer, or applied there and not saved: "
            + ", ".join(e.uri for e in unsaved[:5]),
            "save those files in the editor; if the editor is gone, its next start (or any Stet server "
            "starting on this workspace) writes them to the files",
        )
    return pending


async def _check_hunks(review: Review, f: Findings, pending: list[EffectRow]) -> None:
    blocked = [h for h in review.list(statuses={Status.STALE, Status.ACCEPTED}) if h.problem]
    if blocked:
        f.add(
            "warn",
            f"{len(blocked)} hunk(s) whose decision could not be carried out: "
            + "; ".join(f"{h.id} ({h.status.value}): {h.problem}" for h in blocked[:5]),
            "remove what is in the way (a symlink or a file where a folder should be, a hard link, a full "
            "disk), then run `stet doctor --fix` or restart the editor: a waiting edit is written then, a "
            "stale one becomes pending again to accept; or reject them",
            hunkIds=[h.id for h in blocked],
            problems={h.id: h.problem for h in blocked},
        )
    stale = review.list(statuses={Status.STALE})
    if stale:
        f.add(
            "warn",
            f"{len(stale)} stale hunk(s) (their text changed, they cannot apply): {' '.join(h.id for h in stale[:8])}",
            "reject them (`stet reject ID --feedback ...`) or ask the agent for a fresh proposal",
            hunkIds=[h.id for h in stale],
        )
    else:
        f.add("ok", "no stale hunks")

    drifted = await asyncio.to_thread(_not_on_disk, review)
    if drifted:
        f.add(
            "warn",
            f"{len(drifted)} open hunk(s) whose text is no longer in the file on disk: {' '.join(drifted[:8])}",
            "the file changed outside the review: run `stet doctor --fix` (or open the file in the editor) "
            "to re-check them; those that cannot apply become stale",
            hunkIds=drifted,
        )

    gone = [h for h in review.list(statuses={Status.APPLIED}) if h.gone]
    if gone:
        f.add(
            "warn",
            f"{len(gone)} applied hunk(s) whose text is no longer in the file (removed since: an undo, a checkout, "
            f"another tool): {' '.join(h.id for h in gone[:8])}",
            "re-apply them (`stet reapply ID`, or the editor's Re-apply action) or undo the decision "
            "(`stet undo ID`: back to pending, nothing is reverted)",
            hunkIds=[h.id for h in gone],
        )
    else:
        f.add("ok", "every applied hunk is in its file")

    stuck = [h for h in review.list(statuses={Status.ACCEPTED}) if not any(e.uri == h.uri for e in pending)]
    if stuck:
        f.add(
            "warn",
            f"{len(stuck)} accepted hunk(s) with no edit queued: {' '.join(h.id for h in stuck[:8])}",
            "run `stet doctor --fix` or restart the editor: they are re-checked against the files",
        )


async def _check_inbox(review: Review, f: Findings, fix: bool) -> None:
    store = review.require_store()
    folder = os.path.join(store.home, "inbox")
    if fix and any(is_candidate(n) for n in _names(folder)):
        inbox = Inbox(folder, review)
        try:
            left = await inbox.drain()
        except (StetError, OSError) as exc:  # a symlinked inbox folder: never used
            f.add(
                "problem",
                f"the inbox {folder} is not used: {getattr(exc, 'message', None) or exc}",
                "make it a real folder (not a symlink), then run `stet doctor --fix` again",
            )
        else:
            f.add(
                "fixed",
                f"inbox: {inbox.ingested} file(s) ingested" + (f", {len(left)} left (do not parse)" if left else ""),
            )
    waiting = sorted(n for n in _names(folder) if is_candidate(n))
    if waiting:
        f.add(
            "warn",
            f"{len(waiting)} file(s) waiting in {folder}: {', '.join(waiting[:5])}",
            "a running Stet server or `stet watch` ingests them; `stet doctor --fix` ingests them once",
        )
    failed_dir = os.path.join(folder, "failed")
    failed = sorted(n for n in _names(failed_dir) if n.endswith(".error"))
    if failed:
        reasons = []
        for name in failed[:3]:
            try:  # never follows a symlink nor blocks on a FIFO someone put there
                data = read_bytes(os.path.join(failed_dir, name), limit=64 * 1024) or b""
            except (StetError, OSError):
                continue
            reasons.append(f"{name[:-6]}: {data.decode('utf-8', 'replace').partition(chr(10))[0].strip()}")
        f.add(
            "warn",
            f"{len(failed)} inbox file(s) failed: {'; '.join(reasons)}",
            f"read the .error files in {failed_dir}, fix the proposal and drop it into the inbox again "
            "(or remove them once dealt with)",
        )


async def _check_leftovers(review: Review, f: Findings) -> None:
    """Snapshots waiting for a capture, worktrees of interrupted runs, quarantined databases."""
    store = review.require_store()
    for key, whole, files in await _snapshots(review):
        task = f"task {key}" if key else "no task"
        f.add(
            "ok",
            f"a snapshot ({'the whole workspace' if whole else 'single files'}, {files} file(s), {task}) waits "
            "for a capture",
            f"once the agent has worked: `stet capture{' --task ' + key if key else ''}`; it goes when the task "
            "ends, or with the next `stet run` of the task",
        )
    for path in await asyncio.to_thread(_left_worktrees, review.ws.roots[0]):
        parent = os.path.dirname(path)
        # Older runs made the worktree in a folder of its own: that folder goes too.
        tidy = f" && rmdir {shlex.quote(parent)}" if os.path.basename(parent).startswith("stet-run-") else ""
        f.add(
            "warn",
            f"a worktree left by an interrupted or failed `stet run --worktree`: {path}",
            f"the agent's work is there (`git -C {shlex.quote(path)} status`); take what you need, then "
            f"`git worktree remove --force {shlex.quote(path)}{tidy}`",
        )
    quarantine = os.path.join(store.home, "quarantine")
    if _real_folder(quarantine) and os.listdir(quarantine):
        f.add(
            "warn",
            f"damaged databases were moved aside into {quarantine}",
            "keep them for a bug report or delete them; the review went on with a fresh store",
        )


async def _snapshots(review: Review) -> list[tuple[str, bool, int]]:
    from ..review.snapshot_records import SnapshotRecords

    return await SnapshotRecords(review.state).waiting()


def _left_worktrees(root: str) -> list[str]:
    from ..workspace import git

    try:
        return git.run_worktrees(root)
    except Exception:
        return []


def _real_folder(path: str) -> bool:
    """A folder, not a symlink to one (what a symlink points at is not Stet's to list)."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _names(folder: str) -> list[str]:
    """The regular files in `folder` (reached without following symlinks)."""
    try:
        with safe.folder(folder) as fd:
            return [n for n in os.listdir(fd) if (st := safe.entry(fd, n)) is not None and stat.S_ISREG(st.st_mode)]
    except (StetError, OSError):
        return []


def _not_on_disk(review: Review) -> list[str]:
    """Pending / accepted hunks whose old text cannot be found in the file on disk (read only)."""
    out = []
    for uri, hunks in review.by_uri.items():
        wanted = [h for h in hunks.values() if h.status in (Status.PENDING, Status.ACCEPTED) and h.kind == "edit"]
        if not wanted:
            continue
        try:
            text = read_text(review.ws.path_of(uri))
        except Exception:
            text = None
        index = LineIndex(split_lines(text)) if text is not None else None
        for h in wanted:
            # A kept hunk waits with its new text in the file (or the old one, put back by hand).
            texts = (h.replacement, h.old) if h.kept else (h.old,)
            if index is None or all(locate(index, t, h.line, h.ctx_before, h.ctx_after) is None for t in texts):
                out.append(h.id)
    return out


async def cmd_doctor(args: argparse.Namespace, call: Call) -> int:
    async with opened(args, call, repair=args.fix, tidy=False) as review:
        report = await examine(review, fix=args.fix)
    if args.json:
        print_json(call, report)
    else:
        for item in report["findings"]:
            mark = {"ok": "ok  ", "warn": "WARN", "problem": "FAIL", "fixed": "FIX "}[item["level"]]
            call.out(f"[{mark}] {inert(item['what'])}")  # it may name an inbox file or hunk an agent made
            if item.get("todo"):
                call.out(f"       -> {inert(item['todo'])}")
    return 1 if any(f["level"] in ("warn", "problem") for f in report["findings"]) else 0
