"""Crash torture: a seeded random review against the real `stet serve`, killed over and over.

One *run* is a fresh workspace (four files: LF, CRLF, non-ASCII text in a sub-folder) and a
fresh store. It goes through *rounds*; a round is one life of a server process: start (the
editor re-opens the buffers it still has), check the contract, a few random operations
(proposals, accept / accept with the developer's text / reject / undo by hunk, file or
proposal, some lines of a hunk accepted or rejected (the hunk split into the part and the
rest, whose texts the model stages and trims itself; the parts are not undone, marred or typed
next to here: their lines are their siblings' too), replays of earlier requestIds, buffers opened, typed in, saved, closed, files
changed on disk by someone else, decisions from the `stet` CLI as a second writer on the store,
proposals dropped into .stet/inbox/, and file operations: CreateFile with its content,
RenameFile - sometimes with an edit of the renamed file in the same proposal - and DeleteFile,
sent as `documentChanges`, in `ops/` of the first workspace folder and in a second workspace
folder (a multi-root workspace), accepted, rejected, undone and replayed like the edits, with
the developer's own work sometimes in their way, or a hostile agent's: the folder a create or
a rename would put its file in made a symlink to a folder outside the workspace, or a plain
file), then death: SIGKILL at a random instant while a request or notification is in flight,
SIGKILL while idle, SIGKILL during recovery, a named fault point (`STET_FAULT`, every point
of `stet.faults.POINTS` in turn), or the store removed under the running server (`.stet/`
deleted as `git clean -fdx` does, or only its `-wal`): a decision then must be refused
(-32005), the server is killed, and the review goes on from what Stet saved (the rescued copy
put back in place, or the WAL it copied into the database). Sometimes the editor dies too and
its unsaved buffers are lost.

The checks, after every restart, against an in-memory model that never asks Stet what the
truth is:
- every acknowledged decision is present (status, feedback, the developer's text); a request
  that was in flight may have happened or not, nothing else;
- every hunk the model knows is in the store, and no other; proposals in flight are either
  whole or absent;
- every file (the editor's buffer when it has one open, else the file on disk) equals its
  base - the text as the developer and outside tools left it, which the model tracks line by
  line - with exactly the `applied` hunks put in, each once; an applied hunk whose old text
  the developer had changed is a violation (their text was overwritten);
- a pending hunk whose old text is gone must be stale, a stale one whose text is all there
  must not be (after settling), no hunk stays `accepted`;
- a replayed requestId or proposal changes nothing;
- file operations: the folders they work in hold exactly the files the model expects, byte for
  byte - an applied create's file once with exactly its content, an applied rename's file at its
  new place only (with its edit when that is applied), never over a file of the developer's, an
  applied delete's file gone and only if it was unchanged, an undone operation reverted, nothing
  else (no temp file left behind); a file operation with the developer's work in its way is
  stale, never pending, and one with nothing in its way is not stale; the edit of a renamed file
  is listed where its file is; the folder outside the workspace that blockers point to never
  changes;
- after the store was removed, nothing is acknowledged, and every decision acknowledged before
  is still there once the saved store is put back;
- `PRAGMA integrity_check` is `ok` after every kill.

Every line of every file is a unique token, which is what makes the model exact. A run is
reproducible from its seed as far as its choices go (operations, targets, kill modes and
delays); the instant at which a kill lands relative to the server's work is the OS's.

    python tests/support/torture.py --seed 7 --rounds 100          # one run
    python tests/support/torture.py --soak --seconds 3600          # runs back to back, new seeds
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import shutil
import signal
import sqlite3
import sys
import tempfile
import time
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, for `support`

from pygls.exceptions import JsonRpcException  # noqa: E402

from stet.faults import POINTS  # noqa: E402
from support.flipper import fingerprint  # noqa: E402
from support.harness import ServerDied, Session, read, rng, uri, write  # noqa: E402
from support.load import ENV, busy, from_env  # noqa: E402

# What an action does to a status (None: Conflict), as docs/protocol.md's transitions say.
ACTION = {
    "accept": {"pending": "accepted", "accepted": "accepted", "applied": "applied"},
    "reject": {"pending": "rejected", "stale": "rejected", "rejected": "rejected"},
    "undo": {"accepted": "pending", "rejected": "pending", "applied": "pending", "pending": "pending"},
}
# What may happen to a status with nobody asking: the edit lands or cannot, text goes and comes.
AUTO = {"accepted": {"applied", "stale"}, "pending": {"stale"}, "stale": {"pending"}}
CTX = 3  # lines of context Stet records on each side of a hunk
BLOCKER = "a plain file where a folder should be\n"
FEEDBACKS = [
    "no",
    "use a constant",
    'it\'s "wrong"; DROP TABLE hunks;--',
    "naïve → ünïcödé 😀",
    "a\nb\tc",
    "' OR 1=1 --",
    "%s %d {0} $(rm -rf /)",
    "x" * 2000,
]


def answered_states(ans: dict) -> list[dict]:
    """The HunkStates of a decision's answer: `hunks`, or the `part` and `rest` of some lines."""
    if "hunks" in ans:
        return ans["hunks"]
    return [h for h in (ans["part"], ans["rest"]) if h is not None]


def stage_lines(old: tuple, new: tuple, sel_old: set, sel_new: set) -> tuple:
    """git gui's Stage Lines, written here again for the model: selected old lines go,
    unselected stay; selected new lines come, unselected do not."""
    return (*(t for i, t in enumerate(old) if i not in sel_old), *(t for j, t in enumerate(new) if j in sel_new))


def trimmed(old: tuple, new: tuple, after: str | None, before: str | None) -> tuple:
    """A change without the lines both sides share at either end, the token it goes before
    (`after`: the one after the untrimmed change) and the one it goes after (`before`: the one
    before the untrimmed change)."""
    pre = 0
    while pre < min(len(old), len(new)) and old[pre] == new[pre]:
        pre += 1
    suf = 0
    while suf < min(len(old), len(new)) - pre and old[-1 - suf] == new[-1 - suf]:
        suf += 1
    return (
        old[pre : len(old) - suf],
        new[pre : len(new) - suf],
        old[len(old) - suf] if suf else after,
        old[pre - 1] if pre else before,
    )


def closure(statuses: set[str]) -> set[str]:
    out, todo = set(statuses), list(statuses)
    while todo:
        for nxt in AUTO.get(todo.pop(), ()):
            if nxt not in out:
                out.add(nxt)
                todo.append(nxt)
    return out


def clean_folder(folder: Path) -> None:
    """Remove `folder` as `git clean -fdx` does under a running server: the server may notice
    the loss while the folder is being removed and write its rescued copy into it (the folder
    is then not empty when its turn comes). That is the world's race, not a violation: what
    was there is gone, what the server wrote meanwhile stays, as with git clean."""
    failed: list[str] = []
    shutil.rmtree(folder, onerror=lambda _f, path, info: failed.append(f"{path}: {info[1]}"))
    if (folder / "stet.db").exists():
        raise AssertionError(f"cleaning {folder} left the store in place ({failed})")


@dataclass
class MHunk:
    id: str
    pid: str
    file: str
    old: tuple[str, ...]  # tokens
    new: tuple[str, ...]
    zone: frozenset  # tokens (and "^"/"$" for the file's ends) of the hunk and its context
    statuses: set[str] = field(default_factory=lambda: {"pending", "stale"})
    feedback: set = field(default_factory=lambda: {None})
    texts: set = field(default_factory=lambda: {None})  # the developer's replacement, as tokens
    marred: dict = field(default_factory=dict)  # token of its old text -> what the developer made of it
    after_first: str | None = None  # an insertion: the base token it goes before (None: the end)
    # The rest of an accepted part: its old text is in the file only with the part applied.
    on_part: bool = False
    # An accepted part: the rest made on its text (undone while the rest may be applied, the
    # part's change would be under the rest's: not a decision the torture makes).
    rest_id: str | None = None
    split_into: tuple = ()  # superseded by a split: its part and its rest
    split_from: str | None = None  # a part or a rest: the hunk it was split from
    after_last: str | None = None  # a part's insertion: the token it goes after, when that is there


@dataclass
class FOp:
    """One file-operation proposal of the model: a create, a delete, or a rename (sometimes
    with an edit of the renamed file in the same proposal). Each path belongs to one FOp."""

    pid: str
    kind: str  # create | delete | rename
    path: Path  # the file created, deleted or renamed
    target: Path | None  # where a rename moves it
    content: tuple[str, ...]  # create: the new file's lines; delete / rename: the file's lines before
    eol: str
    edit: tuple[str, str] | None = None  # rename: (old line, new line) of the edit proposed with it
    edit_first: bool = False  # the edit comes before the rename in documentChanges
    hunks: dict = field(default_factory=dict)  # role ("op" / "edit") -> hunk id
    # The developer's own work in the way (None: none): create - a file of theirs at `path`;
    # delete - a line appended to the file; rename - a file of theirs at `target`.
    mine: tuple[str, ...] | None = None
    # A hostile agent's blocker: the first folder of `path` (create) or `target` (rename) below
    # the fop folder made a "symlink" to the outside folder, or a plain "file".
    block: tuple[Path, str] | None = None
    params: dict | None = None  # the stet/propose params, for replays


@dataclass
class FHunk:
    id: str
    op: FOp
    role: str  # "op" (the create / delete / rename) or "edit"
    statuses: set[str] = field(default_factory=lambda: {"pending", "stale"})
    feedback: set = field(default_factory=lambda: {None})
    texts: set = field(default_factory=lambda: {None})


@dataclass
class MFile:
    name: str
    path: Path
    uri: str
    eol: str
    prefix: str
    disk: list[str]  # the base on disk: the file without any of Stet's edits
    buf: list[str] | None = None  # the base in the editor's buffer, when open
    quiet_after: float = 0.0  # no outside writes before this (Stet may still be writing)


@dataclass
class Stats:
    rounds: int = 0
    kills: int = 0
    kills_in_flight: int = 0
    kills_idle: int = 0
    kills_in_recovery: int = 0
    fault_kills: dict = field(default_factory=dict)
    clean_restarts: int = 0
    editor_crashes: int = 0
    ops: dict = field(default_factory=dict)
    replays: int = 0
    checks: int = 0
    fop_proposals: int = 0  # file-operation proposals acknowledged (or found after a kill)
    fop_checks: int = 0  # file operations checked against the model after a restart
    fop_kills: int = 0  # kills with a file-operation request in flight or at its fault point
    fop_applied_seen: int = 0  # checks that found a file operation applied
    blocks: int = 0  # blockers put in a file operation's way (symlinks out, plain files)
    blocked_stale_seen: int = 0  # checks that found a blocked file operation stale, as it must be
    store_losses: int = 0  # stores removed under a running server
    store_loss_refusals: int = 0  # decisions refused (-32005) after the store was removed
    resident_calls: int = 0  # CLI calls made through the thin client with a resident on
    resident_kills: int = 0  # residents SIGKILLed while a CLI call was (maybe) in flight
    load: int = 0  # busy processes that ran beside the torture (load mode)
    timing: dict = field(default_factory=dict)  # seconds spent per phase
    violations: list = field(default_factory=list)

    def spent(self, phase: str, since: float) -> None:
        self.timing[phase] = self.timing.get(phase, 0.0) + time.monotonic() - since

    def merge(self, other: Stats) -> None:
        for name in (
            "rounds",
            "kills",
            "kills_in_flight",
            "kills_idle",
            "kills_in_recovery",
            "clean_restarts",
            "editor_crashes",
            "replays",
            "checks",
            "fop_proposals",
            "fop_checks",
            "fop_kills",
            "fop_applied_seen",
            "blocks",
            "blocked_stale_seen",
            "store_losses",
            "store_loss_refusals",
            "resident_calls",
            "resident_kills",
        ):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for mine, theirs in ((self.fault_kills, other.fault_kills), (self.ops, other.ops), (self.timing, other.timing)):
            for k, v in theirs.items():
                mine[k] = mine.get(k, 0) + v
        self.violations.extend(other.violations)

    def line(self) -> str:
        return (
            f"rounds={self.rounds} kills={self.kills} (in flight {self.kills_in_flight}, idle {self.kills_idle}, "
            f"in recovery {self.kills_in_recovery}, fault points {sum(self.fault_kills.values())}) "
            f"fault_points_fired={len(self.fault_kills)}/{len(POINTS)} checks={self.checks} "
            f"replays={self.replays} editor_crashes={self.editor_crashes} file_ops={self.fop_proposals} "
            f"(kills in flight {self.fop_kills}, checks {self.fop_checks}, seen applied {self.fop_applied_seen}) "
            f"blockers={self.blocks} (seen stale {self.blocked_stale_seen}) store_losses={self.store_losses} (refused after: {self.store_loss_refusals}) "
            f"resident_calls={self.resident_calls} (resident kills {self.resident_kills}) "
            f"load={self.load} violations={len(self.violations)}"
        )


class Violation(Exception):
    pass


# The PostgreSQL database of the run in progress (each run's task has its own), None for SQLite.
DB: ContextVar[str | None] = ContextVar("DB", default=None)
# Whether the run's CLI calls go through the thin client to a resident process (stet/resident/),
# which the run then also kills with SIGKILL, sometimes while a call is in flight.
RESIDENT: ContextVar[bool] = ContextVar("RESIDENT", default=False)


async def run_cli(cwd: Path, *args: str, env: dict | None = None) -> tuple[int, str, str]:
    """The real `stet` command line, as a terminal or an agent runs it."""
    full = {k: v for k, v in os.environ.items() if k not in ("STET_DB", "STET_FAULT")}
    if DB.get():
        full["STET_DB"] = DB.get()
    full["STET_RESIDENT"] = "on" if RESIDENT.get() else "off"
    full["STET_RESIDENT_IDLE"] = "60"
    full.update(env or {})
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "stet",
        *args,
        cwd=str(cwd),
        env=full,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    return proc.returncode, out.decode(), err.decode()


class EditorSession(Session):
    """The harness's editor, whose late (Neovim-style) didChange goes to whichever server is
    running when it fires: the editor outlives the server it was answering."""

    run: Run

    def _send_change(self, u, pairs):
        current = self.run.session
        client = current.client if current is not None else None
        if (
            client is None
            or client._server is None
            or client._server.returncode is not None
            or client._stop_event.is_set()
        ):
            # No server to tell right now: the buffer still changes, a new server gets it with didOpen.
            from support.harness import apply_lsp_edits

            # Made last first, of those at one position too, as the harness's editor does.
            self.docs[u][0] = apply_lsp_edits(self.docs[u][0], pairs)
            self.docs[u][1] += 1
            return
        if current is not self:
            current._send_change(u, pairs)
            return
        super()._send_change(u, pairs)


class Run:
    """One workspace, one store, many server lives."""

    def __init__(
        self,
        seed: int,
        root: Path,
        rounds: int,
        stats: Stats,
        log=None,
        force_point: str | None = None,
        force_mode: str | None = None,
    ):
        self.seed = seed
        self.rnd = random.Random(seed)
        self.root = root
        self.rounds = rounds
        self.stats = stats
        self.fault_turn = 0  # fault rounds take every point of POINTS in turn
        self.force_point = force_point  # every round a fault round at this point
        self.force_mode = force_mode  # every round: "lost" (the store removed) or "block" (a blocker met)
        self.deadline: float | None = None  # no new round after this (monotonic seconds)
        self.log = log or (lambda msg: None)
        self.counter = 0
        self.files: dict[str, MFile] = {}
        self.hunks: dict[str, MHunk] = {}
        self.maybe_proposals: dict[str, list[tuple]] = {}  # in flight when the server died
        self.maybe_splits: dict[str, tuple] = {}  # hunk id -> (part spec, rest spec): in flight when it died
        self.proposals: dict[str, dict] = {}  # acknowledged: params, hunk ids
        self.acked: list[tuple[str, dict, list[str]]] = []  # decisions answered: command, params, hunk ids
        self.editor_docs: dict = {}  # the editor's buffers (harness format), kept across server lives
        self.session: Session | None = None
        self.round = 0
        self.history: list[str] = []
        self.last_proposal: str | None = None
        # File operations live in their own files: ops/ in the first workspace folder and the
        # whole second folder (a multi-root workspace); the edit hunks above never touch them.
        self.root2 = root.parent / "ws2"
        self.fop_dirs = [root / "ops", self.root2]
        self.outside = root.parent / "outside"  # where a hostile agent's symlinks point
        self.outside_before: dict = {}
        self.free: dict[Path, tuple[tuple[str, ...], str]] = {}  # files no FOp owns: lines, eol
        self.fops: dict[str, FOp] = {}  # acknowledged (or found) file-operation proposals
        self.fhunks: dict[str, FHunk] = {}
        self.maybe_fops: dict[str, FOp] = {}  # in flight when the server died
        self.last_fop: str | None = None
        self.current_op: str | None = None

    # --- tokens and files ------------------------------------------------------------
    def token(self, f: MFile, kind: str) -> str:
        self.counter += 1
        return f"{f.prefix}{kind}{self.counter}"

    def setup(self) -> None:
        specs = [
            ("a.py", "\n", "a", 60),
            ("b.txt", "\r\n", "b", 45),
            ("sub/c.md", "\n", "ü😀c", 45),
            ("d.py", "\n", "d", 30),
        ]
        for name, eol, prefix, n in specs:
            path = self.root / name
            f = MFile(name, path, "", eol, prefix, [])
            f.disk = [self.token(f, "L") for _ in range(n)]
            write(path, self.render(f.disk, f.eol))
            f.uri = uri(path)
            self.files[name] = f
        for d in self.fop_dirs:
            d.mkdir(parents=True, exist_ok=True)
        write(self.outside / "users-file.txt", "the user's, outside the workspace\n")
        self.outside_before = fingerprint(self.outside)
        for i in range(6):
            self.new_free_file()

    @staticmethod
    def render(tokens, eol: str) -> str:
        return "".join(t + eol for t in tokens)

    @staticmethod
    def tokens_of(text: str) -> list[str]:
        return [line.rstrip("\r\n") for line in text.splitlines(keepends=True)]

    def base(self, f: MFile) -> list[str]:
        return f.buf if f.buf is not None else f.disk

    def is_open(self, f: MFile) -> bool:
        return f.uri in self.editor_docs

    def actual(self, f: MFile) -> str:
        return self.editor_docs[f.uri][0] if self.is_open(f) else read(f.path)

    def zones(self, f: MFile) -> set:
        out: set = set()
        for h in self.hunks.values():
            if h.file == f.name:
                out |= h.zone
        for specs in self.maybe_proposals.values():
            for spec in specs:
                if spec[0] == f.name:
                    out |= spec[3]
        return out

    def note(self, msg: str) -> None:
        self.history.append(f"r{self.round}: {msg}")
        self.log(msg)

    def violation(self, msg: str) -> None:
        text = f"seed {self.seed} round {self.round}: {msg}"
        self.stats.violations.append(text)
        self.log("VIOLATION " + text)

    # --- the server ------------------------------------------------------------------
    async def start(self, env: dict) -> Session:
        if DB.get():
            env = {**env, "STET_DB": DB.get()}
        s = EditorSession(self.root, env=env, late_changes=self.rnd.random() < 0.25, folders=[self.root, self.root2])
        s.run = self
        s.docs = self.editor_docs
        self.session = s
        return s

    async def kill(self) -> None:
        s = self.session
        if s is not None and s.client is not None and s.client._server.returncode is None:
            try:
                os.kill(s.client._server.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            await s.client._server.wait()
        await self.drop_client()

    async def drop_client(self) -> None:
        s = self.session
        if s is not None and s.client is not None:
            try:
                await asyncio.wait_for(s.client.stop(), 5)
            except Exception:
                pass

    def integrity(self) -> None:
        db = self.root / ".stet" / "stet.db"
        if DB.get() or not db.exists():  # (PostgreSQL checks its own pages)
            return
        con = sqlite3.connect(db, timeout=10)
        try:
            verdict = con.execute("PRAGMA integrity_check").fetchall()
        finally:
            con.close()
        if verdict != [("ok",)]:
            self.violation(f"integrity_check: {verdict[:3]}")

    # --- one run ---------------------------------------------------------------------
    async def run(self) -> None:
        self.setup()
        for self.round in range(1, self.rounds + 1):
            if self.deadline is not None and time.monotonic() > self.deadline and self.round > 3:
                break
            self.stats.rounds += 1
            try:
                await self.one_round()
            except Violation:
                break
            if len(self.zones_free_files()) == 0 and not self.hunks_decidable():
                break  # the files are full of hunks: a new run starts afresh
        await self.kill()

    def zones_free_files(self) -> list[MFile]:
        return [f for f in self.files.values() if self.free_runs(f, 1)]

    def hunks_decidable(self) -> bool:
        return any(h.statuses & {"pending", "stale", "accepted", "rejected"} for h in self.hunks.values())

    async def one_round(self) -> None:
        rnd = self.rnd
        mode = rnd.choices(["fault", "flight", "idle", "recovery", "clean", "lost"], [30, 40, 12, 12, 6, 4])[0]
        env: dict = {}
        point = None
        if self.force_point and self.round > 1:
            mode = "fault"
        if self.force_mode == "lost" and self.round > 1:
            mode = "lost"
        if mode == "lost" and DB.get():
            mode = "idle"  # no file to remove under a server whose store is PostgreSQL
        if mode == "fault":
            point = self.force_point or POINTS[(self.seed + self.fault_turn) % len(POINTS)]
            self.fault_turn += 1
            env["STET_FAULT"] = f"{point}@{rnd.choice([1, 1, 2, 3])}"
        delay = rnd.uniform(0, 0.35)
        s = await self.start(env)
        self.note(f"start mode={mode} fault={env.get('STET_FAULT')} late={s.late_changes} open={len(self.editor_docs)}")
        t0 = time.monotonic()
        try:
            await s.start(wait_restored=False)
            if mode == "recovery":
                await asyncio.sleep(delay)
                if s.client._server.returncode is None:
                    self.stats.kills_in_recovery += 1
                    await self.died_by_us()
                    return
            await s._unless_dead(asyncio.shield(s.restored), 30)
            restored_at = time.monotonic()
            self.stats.spent("start", t0)
            await self.verify(s, restored_at)
            self.stats.spent("verify", restored_at)
            t0 = time.monotonic()
            if rnd.random() < 0.3:
                await self.replay(s)
            if point is not None:
                await self.reach(s, point)
            if self.force_mode == "block":
                await self.reach_block(s)
            for _ in range(rnd.randint(1, 7)):
                await self.operation(s, kill_after=None)
            if mode == "flight":
                self.stats.kills_in_flight += 1
                await self.operation(s, kill_after=rnd.uniform(0, 0.04))
                return
            if mode == "clean":
                await asyncio.wait_for(s.stop(), 30)
                self.stats.clean_restarts += 1
                self.after_death(editor_may_crash=False)
                return
            if mode == "lost":
                await self.lose_store(s)
                return
            self.stats.spent("operations", t0)
            # idle (or a fault point that did not fire): the process dies between requests
            await asyncio.sleep(rnd.uniform(0, 0.05))
            self.stats.kills_idle += 1
            await self.died_by_us()
        except ServerDied:
            code = s.client._server.returncode
            await self.drop_client()
            if point is None or code != -signal.SIGKILL:
                import traceback

                self.violation(
                    f"the server died by itself (exit {code}) with no fault point asked: "
                    + " | ".join(traceback.format_exc().splitlines()[-8:])
                )
                raise Violation()
            self.stats.kills += 1
            self.stats.fault_kills[point] = self.stats.fault_kills.get(point, 0) + 1
            if (self.current_op or "").startswith("fop_"):
                self.stats.fop_kills += 1
            self.note(f"fault point {point} fired")
            self.after_death()

    async def lose_store(self, s: Session) -> None:
        """The store removed under the running server: `.stet/` deleted (as `git clean -fdx`
        does) or only its WAL. A decision must then be refused; the server is killed and the
        review goes on from what Stet saved (its rescued copy put back, or the WAL it copied)."""
        how = self.rnd.choice(["clean", "wal"])
        folder = self.root / ".stet"
        db = folder / "stet.db"
        self.note(f"store lost: {how}")
        self.stats.store_losses += 1
        if how == "clean":
            clean_folder(folder)
        else:
            os.unlink(f"{db}-wal")
        hs = self.pick({"pending"}) or self.fpick({"pending"})
        if hs:
            coro, _, unknown = self.decision(s, "stet.accept", "accept", {"hunkIds": [h.id for h in hs]}, hs)
            try:
                answer = await s._unless_dead(coro, 30)
            except JsonRpcException as exc:
                if exc.code != -32005:
                    self.violation(f"a decision after the store was removed answered {exc.code}: {exc.message}")
                    raise Violation() from None
                self.stats.store_loss_refusals += 1
                unknown()  # refused after the check; the model allows what a refused request may have done
            else:
                self.violation(f"a decision was acknowledged after the store was removed ({how}): {answer}")
                raise Violation()
        else:
            # No decision to be refused (nothing pending): the server notices the loss by itself,
            # within its sync interval, saves what it can and says so; it is killed once it has.
            # A kill before is no test of it, and loses for good what only the deleted WAL held
            # (seeds 9004 and 9005 once killed at once after `store lost: wal`).
            deadline = time.monotonic() + 30
            while not any("review store" in m.message for m in s.messages):  # said once it saved what it could
                if time.monotonic() > deadline:
                    self.violation(f"the server did not say its store was lost ({how}) within 30 s")
                    raise Violation()
                await asyncio.sleep(0.05)
        await self.kill()
        self.stats.kills += 1
        if how == "clean":
            rescued = sorted(folder.glob("stet.db.rescued-*"))
            if not rescued:
                self.violation(f"the store was removed ({how}) and Stet saved no copy of it")
                raise Violation()
            os.replace(rescued[-1], db)
        self.after_death()

    async def reach_block(self, s: Session) -> None:
        """A file operation blocked by a hostile agent, then accepted: what CI must see happen."""
        await self.operation(s, None, "fop_propose", kind=self.rnd.choice(["create", "rename"]), deep=True)
        if self.last_fop is not None:
            await self.operation(s, None, "fop_block", only=self.last_fop)
            await self.operation(s, None, "fop_accept_new")

    async def reach(self, s: Session, point: str) -> None:
        """Operations that pass the fault point, so that every point fires in every run."""
        fop = self.rnd.random() < 0.5  # half the time the point is reached by a file operation
        if point == "propose:after-commit":
            await self.operation(s, None, "fop_propose" if fop else "propose")
        elif point == "inbox:after-propose":
            await self.operation(s, None, "inbox")
        elif point == "task:after-commit":
            await self.cli_task_fault()
        elif point == "split:after-commit":
            for _ in range(5):  # a proposal with a hunk of two lines or more to split
                await self.operation(s, None, "propose")
                if self.splittable(self.last_proposal):
                    await self.operation(s, None, self.rnd.choice(["accept_lines", "reject_lines"]), last=True)
                    break
        elif point.startswith(("decide:", "effect:")) and fop:
            await self.operation(s, None, "fop_propose")
            await self.operation(s, None, "fop_accept_new")
        elif point.startswith(("decide:", "effect:")):
            await self.operation(s, None, "propose")
            await self.operation(s, None, "accept_new")
        elif point == "recover:after-effect":  # an accepted edit held in an unsaved buffer, then closed
            f = self.rnd.choice(list(self.files.values()))
            await self.operation(s, None, "open", f=f)
            await self.operation(s, None, "propose", only=f)
            await self.operation(s, None, "accept_new")
            await self.operation(s, None, "close", f=f, save=False)
            await asyncio.sleep(0.5)

    async def died_by_us(self) -> None:
        await self.kill()
        self.stats.kills += 1
        self.after_death()

    def after_death(self, editor_may_crash: bool = True) -> None:
        self.integrity()
        if editor_may_crash and self.editor_docs and self.rnd.random() < 0.3:
            self.stats.editor_crashes += 1
            self.note("the editor crashed too: unsaved buffers lost")
            self.editor_docs.clear()
            for f in self.files.values():
                f.buf = None

    # --- the contract ----------------------------------------------------------------
    async def verify(self, s: Session, restored_at: float) -> None:
        self.stats.checks += 1
        await self.inbox_settled(s)  # files left in the inbox are ingested at start
        # Proposals in flight at the last death: whole or absent, never partial.
        states = await s.hunks()
        by_id = {h["id"]: h for h in states}
        for pid, specs in list(self.maybe_proposals.items()):
            got = [h for h in states if h["proposalId"] == pid]
            if got:
                self.adopt(pid, specs, got)
            del self.maybe_proposals[pid]
        for hid, specs in list(self.maybe_splits.items()):
            self.adopt_split(hid, specs, by_id)
            del self.maybe_splits[hid]
        for pid, op in list(self.maybe_fops.items()):
            got = [h for h in states if h["proposalId"] == pid]
            if got:
                self.adopt_fop(op, got)
            else:  # never made: its paths are free again (a delete's or rename's file is still there)
                if op.kind != "create":
                    self.free[op.path] = (op.content, op.eol)
            del self.maybe_fops[pid]
        unknown = [h["id"] for h in states if h["id"] not in self.hunks and h["id"] not in self.fhunks]
        if unknown:
            self.violation(f"hunks the model never saw: {unknown[:5]}")
            raise Violation()
        missing = [hid for hid in (*self.hunks, *self.fhunks) if hid not in by_id]
        if missing:
            self.violation(f"acknowledged hunks missing after restart: {missing[:5]}")
            raise Violation()
        settle = any(self.is_open(f) for f in self.files.values()) or any(
            "accepted" in h.statuses for h in (*self.hunks.values(), *self.fhunks.values())
        )
        min_until = restored_at + (0.3 if settle else 0)
        # A state that never comes right is a violation; one that comes right later on a busy
        # machine (buffers settled after a delay, a derived mark flushed) is not.
        deadline = time.monotonic() + 30
        while True:
            problems = self.check(states) + self.check_fops(states)
            if not problems and time.monotonic() >= min_until:
                break
            if time.monotonic() > deadline:
                for p in problems:
                    self.violation(p)
                raise Violation()
            await asyncio.sleep(0.1)
            states = await s.hunks()
        self.stats.fop_checks += len(self.fops)
        by_status = {h["id"]: h["status"] for h in states}
        self.stats.blocked_stale_seen += sum(
            1 for op in self.fops.values() if op.block is not None and by_status.get(op.hunks["op"]) == "stale"
        )
        self.stats.fop_applied_seen += sum(1 for h in states if h["kind"] != "edit" and h["status"] == "applied")
        for h in states:  # the model now knows which of the possible outcomes happened
            m = self.lookup(h["id"])
            m.statuses = closure({h["status"]})
            m.feedback = {h["feedback"]}
            m.texts = {self.applied_tokens(h)}

    async def adopt_ingested(self, s: Session) -> None:
        states = await s.hunks()
        for pid, specs in list(self.maybe_proposals.items()):
            got = [h for h in states if h["proposalId"] == pid]
            if got:
                self.adopt(pid, specs, got)
                del self.maybe_proposals[pid]

    def adopt(self, pid: str, specs: list[tuple], got: list[dict]) -> None:
        for spec in specs:
            name, old, new, zone, after_first = spec
            match = [
                h
                for h in got
                if self.tokens_of(h["oldText"]) == list(old)
                and self.tokens_of(h["newText"]) == list(new)
                and h["uri"] == self.files[name].uri
            ]
            if len(match) != 1:
                self.violation(
                    f"proposal {pid} in flight came back partial or different: {spec[:3]} vs {len(got)} hunks"
                )
                raise Violation()
            self.hunks[match[0]["id"]] = MHunk(match[0]["id"], pid, name, old, new, zone, after_first=after_first)
        if len(got) != len(specs):
            self.violation(f"proposal {pid}: {len(got)} hunks stored, {len(specs)} proposed")
            raise Violation()

    def adopt_split(self, hid: str, specs: tuple, by_id: dict) -> None:
        """A split in flight at a death: whole (the hunk superseded, its two parts as the model
        says) or absent."""
        m = self.hunks[hid]
        h = by_id[hid]
        if h["status"] != "superseded":
            m.statuses = m.statuses - {"superseded"}
            return
        parts = h.get("parts") or []
        if len(parts) != 2 or any(p not in by_id for p in parts):
            self.violation(f"split of {hid} in flight came back without its parts: {parts}")
            raise Violation()
        self.add_parts(m, specs, [by_id[parts[0]], by_id[parts[1]]])

    def add_parts(self, m: MHunk, specs: tuple, states: list[dict]) -> None:
        """The part and the rest of `m` into the model, checked against what it expects."""
        m.statuses = {"superseded"}
        m.split_into = (states[0]["id"], states[1]["id"])
        made = []
        for (old, new, after, before, on_part), h in zip(specs, states):
            if (tuple(self.tokens_of(h["oldText"])), tuple(self.tokens_of(h["newText"]))) != (old, new):
                self.violation(f"a part of {m.id} is {h['oldText']!r} -> {h['newText']!r}, not {old} -> {new}")
                raise Violation()
            self.hunks[h["id"]] = MHunk(
                h["id"],
                m.pid,
                m.file,
                old,
                new,
                m.zone,
                closure({h["status"]}),
                {h["feedback"]},
                after_first=after,
                on_part=on_part,
                split_from=m.id,
                after_last=before,
            )
            made.append(self.hunks[h["id"]])
        if specs[1][4]:  # the rest of an accepted part
            made[0].rest_id = made[1].id
        if m.pid in self.proposals:  # the proposal's hunks, as a replay of it answers them
            self.proposals[m.pid]["ids"] = sorted({*self.proposals[m.pid]["ids"], *(h.id for h in made)})

    def lookup(self, hid: str):
        return self.hunks.get(hid) or self.fhunks.get(hid)

    def applied_tokens(self, h: dict):
        text = h.get("appliedText")
        return None if text is None else tuple(self.tokens_of(text))

    def check(self, states: list[dict]) -> list[str]:
        problems = []
        by_id = {h["id"]: h for h in states}
        for hid, m in self.hunks.items():
            h = by_id[hid]
            base = self.base(self.files[m.file])
            lost = (
                h["status"] == "stale"
                and "applied" in m.statuses
                and (
                    not self.intact(base, m.old)
                    if m.old
                    # An insertion stands between its nearest lines: one of them gone (e.g. its
                    # sibling's old text, typed back in a buffer lost since), it cannot be placed.
                    else any(t is not None and t not in base for t in (m.after_last, m.after_first))
                )
            )  # applied -> stale: a lost buffer
            if h["status"] not in m.statuses and not lost:
                problems.append(f"{hid} is {h['status']}, acknowledged history allows only {sorted(m.statuses)}")
            if h["status"] == "accepted":
                problems.append(f"{hid} stays accepted: its edit never landed nor became stale")
            if h["feedback"] not in m.feedback:
                problems.append(f"{hid} feedback {h['feedback']!r:.60} not among {[str(x)[:40] for x in m.feedback]}")
            if self.applied_tokens(h) not in m.texts:
                problems.append(f"{hid} appliedText {h.get('appliedText')!r:.60} not as decided")
        for f in self.files.values():
            base = self.base(f)
            mine = [m for m in self.hunks.values() if m.file == f.name]
            applied = [
                (m, self.applied_tokens(by_id[m.id]) or m.new) for m in mine if by_id[m.id]["status"] == "applied"
            ]
            expected, err = self.reconstruct(base, applied)
            where = "buffer" if self.is_open(f) else "disk"
            if err:
                problems.append(f"{f.name} ({where}): {err}")
                continue
            actual = self.actual(f)
            if actual != self.render(expected, f.eol):
                problems.append(
                    f"{f.name} ({where}) differs from its base with the applied hunks: "
                    + self.describe(self.tokens_of(actual), expected, applied)
                )
            actual_tokens = self.tokens_of(actual)
            for m in mine:
                problems += self.check_range(m, by_id[m.id], actual_tokens, where, by_id)
            for m in mine:
                status = by_id[m.id]["status"]
                if not m.old:
                    if status == "stale" and not m.split_from:  # (a part's context may be its siblings' text)
                        problems.append(f"{m.id} (an insertion whose context is intact) is stale")
                    continue
                # A part's lines are its siblings' too: they are judged in the file with the applied
                # hunks (its siblings included), as the others are in the base (no applied hunk
                # touches their lines).
                intact = self.intact(expected if m.split_from else base, m.old)
                if status == "pending" and not intact:
                    problems.append(f"{m.id} is pending but its old text is gone from the {where}")
                if status == "stale" and intact:
                    seen = expected if m.split_from else base
                    i = self.find(seen, m.old) or 0
                    problems.append(
                        f"{m.id} is stale but its old text is all there in the {where}: "
                        f"{seen[max(0, i - CTX) : i + len(m.old) + CTX]}, line {i}; actual {self.tokens_of(actual)[max(0, i - 6) : i + 6]}"
                    )
        return problems

    def check_range(self, m: MHunk, h: dict, actual: list[str], where: str, by_id: dict) -> list[str]:
        """The reported range is on the hunk's text as the document is now: its old text for a
        pending hunk, its new text for an applied one (which must say it is in the file) - or,
        for an accepted part whose rest is applied too, somewhere under the rest's."""
        line = h["range"]["start"]["line"]
        if h["status"] == "applied" and self.under_rest(m, by_id):
            return (
                []
                if h.get("inFile") is True
                else [f"{m.id} is applied under its rest, but inFile is {h.get('inFile')}"]
            )
        if h["status"] == "applied":
            repl = self.applied_tokens(h) or m.new
            out = (
                []
                if h.get("inFile") is True
                else [f"{m.id} is applied and in the {where}, but inFile is {h.get('inFile')}"]
            )
            if repl and tuple(actual[line : line + len(repl)]) != tuple(repl):
                out.append(
                    f"{m.id} applied: its range (line {line}) selects {actual[line : line + len(repl)]}, not {repl}"
                )
            return out
        if h.get("inFile") is not None:
            return [f"{m.id} is {h['status']} but inFile is {h.get('inFile')} (only an applied hunk has one)"]
        if h["status"] != "pending":
            return []
        if m.old:
            if tuple(actual[line : line + len(m.old)]) != m.old:
                return [
                    f"{m.id} pending: its range (line {line}) selects {actual[line : line + len(m.old)]}, not {m.old}"
                ]
            return []
        at = self.insertion_point(actual, m)
        if at is not None and line != at:
            return [f"{m.id} pending insertion: its range is at line {line}, not {at}"]
        return []

    @staticmethod
    def intact(base: list[str], old: tuple) -> bool:
        return Run.find(base, old) is not None

    @staticmethod
    def find(tokens: list[str], old: tuple) -> int | None:
        """Where `old` stands whole in `tokens` (the first place). Not at its first token's first
        occurrence: a part of a hunk can repeat a line (an old line kept and the same line added;
        seed 9022 round 20 once read such a rest's old text as gone)."""
        for i in range(len(tokens) - len(old) + 1):
            if tuple(tokens[i : i + len(old)]) == old:
                return i
        return None

    def reconstruct(self, base: list[str], applied) -> tuple[list[str], str | None]:
        out = list(base)
        for m, repl in applied:
            if m.old:
                if not self.intact(out, m.old):
                    return out, f"{m.id} is applied but the developer had changed its old text {m.old}"
                i = self.find(out, m.old) or 0
                out[i : i + len(m.old)] = list(repl)
            else:
                i = self.insertion_point(out, m)
                if i is None:
                    return out, f"cannot place insertion {m.id}: its context is gone from the model"
                out[i:i] = list(repl)
        return out, None

    @staticmethod
    def insertion_point(tokens: list[str], m: MHunk) -> int | None:
        if m.after_last is not None and m.after_last in tokens:
            return tokens.index(m.after_last) + 1
        if m.after_first is None:
            return len(tokens)
        return tokens.index(m.after_first) if m.after_first in tokens else None

    @staticmethod
    def describe(actual: list[str], expected: list[str], applied) -> str:
        import difflib

        diff = [d for d in difflib.ndiff(expected, actual) if d[:1] in "+-"]
        counts = {}
        for m, repl in applied:
            counts[m.id] = sum(1 for t in actual if repl and t == repl[0])
        twice = {k: v for k, v in counts.items() if v > 1}
        return f"diff {diff[:8]}" + (f"; applied more than once: {twice}" if twice else "")

    # --- operations --------------------------------------------------------------------
    async def operation(self, s: Session, kill_after: float | None, op: str | None = None, **kw) -> None:
        rnd = self.rnd
        weights = {
            "propose": 18,
            "accept": 22,
            "accept_text": 4,
            "reject": 10,
            "undo": 9,
            "accept_file": 3,
            "reject_file": 2,
            "accept_all": 2,
            "open": 8,
            "close": 5,
            "save": 5,
            "type": 12,
            "type_near": 10,
            "outside": 8,
            "mar": 4,
            "unmar": 3,
            "replay": 3,
            "accept_lines": 6,
            "reject_lines": 4,
            "cli": 30 if RESIDENT.get() else 6,  # through the thin client: more of them
            "inbox": 4,
            "fop_propose": 9,
            "fop_accept": 8,
            "fop_accept_all": 2,
            "fop_reject": 2,
            "fop_undo": 5,
            "fop_mar": 4,
            "fop_unmar": 3,
            "fop_block": 3,
            "fop_unblock": 2,
        }
        if op is None and kill_after is not None and rnd.random() < 0.3:  # a file operation in flight
            op = rnd.choice(["fop_propose", "fop_accept", "fop_accept", "fop_accept_all", "fop_undo"])
        op = op or rnd.choices(list(weights), list(weights.values()))[0]
        self.stats.ops[op] = self.stats.ops.get(op, 0) + 1
        self.current_op = op
        if (
            kill_after is not None
            and op.startswith("fop_")
            and op not in ("fop_mar", "fop_unmar", "fop_block", "fop_unblock")
        ):
            self.stats.fop_kills += 1
        handler = getattr(self, f"op_{op}")
        try:
            request = handler(s, **kw)  # may return an awaitable request and a callback for its answer
        except (RuntimeError, ConnectionError) as exc:  # a notification to a server that just died
            server = s.client._server
            if server is not None and (server.returncode is not None or s.client._stop_event.is_set()):
                await server.wait()
                raise ServerDied(server.returncode) from exc
            raise
        if asyncio.iscoroutine(request):  # an operation of another process (the CLI, the inbox)
            task = asyncio.ensure_future(request)
            if kill_after is None:
                await task
                if op == "inbox":
                    await self.adopt_ingested(s)
                return
            done, _ = await asyncio.wait({task}, timeout=kill_after)
            await self.died_by_us()
            try:
                await task
            except ServerDied:  # an inbox file in flight when we killed the server: ingested at restart
                pass
            return
        if request is None:
            if kill_after is not None:
                await asyncio.sleep(kill_after)
                await self.died_by_us()
            return
        coro, on_answer, on_unknown = request
        task = asyncio.ensure_future(coro)
        if kill_after is None:
            try:
                answer = await task
            except JsonRpcException as exc:
                answer = exc
            except ServerDied:
                on_unknown()  # a fault point: the request may or may not have been carried out
                raise
            on_answer(answer)
            return
        done, _ = await asyncio.wait({task}, timeout=kill_after)
        await self.died_by_us()
        if task in done and task.exception() is None:
            on_answer(task.result())
        elif task in done and isinstance(task.exception(), JsonRpcException):
            on_answer(task.exception())
        else:
            if not task.done():
                task.cancel()
            on_unknown()
        try:
            await task
        except BaseException:
            pass

    def request_id(self) -> str:
        self.counter += 1
        return f"req-{self.seed}-{self.counter}"

    # proposals
    def free_runs(self, f: MFile, length: int, taken: set | None = None) -> list[int]:
        """Starts s of runs [s, s+length) of the base whose zone meets no other hunk's zone."""
        base = self.base(f)
        zones = self.zones(f) | (taken or set())
        disk_pos = {t: i for i, t in enumerate(f.disk)}
        out = []
        for s in range(0, len(base) - length + 1):
            lo, hi = s - CTX, s + length + CTX
            zone = set(base[max(0, lo) : hi])
            if lo < 0:
                zone.add("^")
            if hi > len(base):
                zone.add("$")
            if zone & zones:
                continue
            if f.buf is not None:  # the context must also be what the disk has (the buffer may be lost)
                seg = base[max(0, lo) : hi]
                if any(t not in disk_pos for t in seg) or [disk_pos[t] for t in seg] != list(
                    range(disk_pos[seg[0]], disk_pos[seg[0]] + len(seg))
                ):
                    continue
            out.append(s)
        return out

    def op_propose(self, s: Session, only: MFile | None = None):
        built = self.build_proposal(only)
        if built is None:
            return None
        pid, changes, specs = built
        self.note(f"propose {pid}: {[(x[0], x[1], x[2]) for x in specs]}")

        def answered(ans):
            if isinstance(ans, JsonRpcException):
                self.violation(f"propose {pid} refused: {ans.code} {ans.message}")
                raise Violation()
            self.adopt(pid, specs, ans["hunks"])
            self.proposals[pid] = {"changes": changes, "ids": sorted(h["id"] for h in ans["hunks"])}
            self.last_proposal = pid

        def unknown():
            self.maybe_proposals[pid] = specs

        return s.propose(pid, changes), answered, unknown

    def build_proposal(self, only: MFile | None = None, pool: list[MFile] | None = None):
        rnd = self.rnd
        pid = f"p{self.seed}-{self.round}-{self.counter}"
        self.counter += 1
        changes: dict[str, list] = {}
        specs = []
        pool = list(self.files.values()) if pool is None else pool
        for f in [only] if only else rnd.sample(pool, min(len(pool), rnd.randint(1, 2))):
            taken: set = set()
            actual_lines = self.tokens_of(self.actual(f))
            for _ in range(rnd.randint(1, 3)):
                n_old = rnd.choice([0, 1, 1, 2, 3])
                n_new = rnd.choice([1, 1, 2, 3] if n_old == 0 else [0, 1, 1, 2, 3])
                starts = self.free_runs(f, max(n_old, 1), taken)
                if not starts:
                    break
                start = rnd.choice(starts)
                base = self.base(f)
                old = tuple(base[start : start + n_old])
                new = tuple(self.token(f, "N") for _ in range(n_new))
                lo, hi = start - CTX, start + n_old + CTX
                zone = set(base[max(0, lo) : hi]) | ({"^"} if lo < 0 else set()) | ({"$"} if hi > len(base) else set())
                taken |= zone
                line = actual_lines.index(base[start]) if start < len(base) else len(actual_lines)
                r = rng(line, 0, line + n_old, 0)
                changes.setdefault(f.uri, []).append((r, "".join(t + "\n" for t in new)))
                specs.append((f.name, old, new, frozenset(zone), base[start] if start < len(base) else None))
        if not specs:
            return None
        return pid, changes, specs

    # decisions
    def pick(self, statuses: set[str] | None = None, n: int = 1) -> list[MHunk]:
        pool = [h for h in self.hunks.values() if statuses is None or h.statuses & statuses]
        if not pool:
            return []
        return self.rnd.sample(pool, min(n, len(pool)))

    def decision(
        self, s: Session, command: str, action: str, params: dict, targets: list[MHunk] | None, scope_pool=None
    ):
        params = {**params, "requestId": self.request_id()}
        self.note(f"{command} {json.dumps(params, ensure_ascii=False)[:160]}")

        def answered(ans):
            if isinstance(ans, JsonRpcException):
                if ans.code not in (-32001, -32002):
                    self.violation(f"{command} answered {ans.code}: {ans.message}")
                    raise Violation()
                # Refused: nothing changed; Conflict only when some target forbids it.
                sure = [m for m in targets or [] if isinstance(m, MHunk)]
                if (
                    sure
                    and len(sure) == len(targets or [])
                    and ans.code == -32002
                    and all(m.statuses <= set(ACTION[action]) for m in sure)
                ):
                    self.violation(f"{command} refused ({ans.message}) though every target allows it")
                    raise Violation()
                return
            ids = [h["id"] for h in ans["hunks"]]
            for h in ans["hunks"]:
                m = self.lookup(h["id"])
                if m is None:
                    self.violation(f"{command} answered about an unknown hunk {h['id']}")
                    raise Violation()
                m.statuses = closure({h["status"]})
                m.feedback = {h["feedback"]}
                m.texts = {self.applied_tokens(h)}
            self.acked.append((command, params, ids))

        def unknown():
            pool = targets if targets is not None else scope_pool()
            for m in pool:
                nxt = {ACTION[action].get(st) for st in m.statuses} - {None}
                before = set(m.statuses)
                m.statuses = closure(m.statuses | nxt)
                if nxt - before or action == "undo":
                    if action == "undo":
                        m.feedback = m.feedback | {None}
                        m.texts = m.texts | {None}
                    elif "feedback" in params:
                        m.feedback = m.feedback | {params["feedback"]}
                    if "text" in params:
                        m.texts = m.texts | {tuple(self.tokens_of(params["text"]))}

        return s.command(command, params), answered, unknown

    def op_accept_new(self, s):
        """Accept the hunks of the last proposal (pending for sure): reaches decisions and effects."""
        hs = [h for h in self.hunks.values() if h.pid == self.last_proposal and "pending" in h.statuses]
        if not hs:
            return None
        return self.decision(s, "stet.accept", "accept", {"hunkIds": [h.id for h in hs]}, hs)

    def op_accept(self, s):
        hs = self.pick({"pending", "accepted", "applied", "stale"}, self.rnd.choice([1, 1, 2, 3]))
        if not hs:
            return None
        return self.decision(s, "stet.accept", "accept", {"hunkIds": [h.id for h in hs]}, hs)

    def op_accept_text(self, s):
        hs = self.pick({"pending"})
        if not hs:
            return None
        f = self.files[hs[0].file]
        text = "".join(self.token(f, "X") + "\n" for _ in range(self.rnd.randint(1, 2)))
        return self.decision(s, "stet.accept", "accept", {"hunkIds": [hs[0].id], "text": text}, hs)

    def op_reject(self, s):
        hs = self.pick({"pending", "stale", "rejected"}, self.rnd.choice([1, 1, 2]))
        if not hs:
            return None
        return self.decision(
            s, "stet.reject", "reject", {"hunkIds": [h.id for h in hs], "feedback": self.rnd.choice(FEEDBACKS)}, hs
        )

    def under_rest(self, m: MHunk, by_id: dict) -> bool:
        """An accepted part whose rest (or a part of it, split again) is applied."""
        todo = [m.rest_id] if m.rest_id else []
        while todo:
            h = self.hunks[todo.pop()]
            if by_id[h.id]["status"] == "applied":
                return True
            todo.extend(h.split_into)
        return False

    @staticmethod
    def undoable(m: MHunk | FHunk) -> bool:
        """Not a part or a rest: their lines and context are their siblings' too, so what an
        undo of one finds depends on what was decided of the others - beyond what this model
        tracks line by line (tests/e2e/test_parts.py and test_lsp_parts.py undo parts)."""
        return not (isinstance(m, MHunk) and m.split_from)

    def op_undo(self, s):
        hs = [h for h in self.pick({"accepted", "applied", "rejected"}, self.rnd.choice([1, 1, 2])) if self.undoable(h)]
        if not hs:
            return None
        return self.decision(s, "stet.undo", "undo", {"hunkIds": [h.id for h in hs]}, hs)

    def splittable(self, pid: str | None = None) -> list[MHunk]:
        """Hunks waiting for a decision (pending, or stale if their text went), with two changed
        lines or more (of the proposal `pid`)."""
        return [
            h
            for h in self.hunks.values()
            if "pending" in h.statuses
            and h.statuses <= {"pending", "stale"}
            and len(h.old) + len(h.new) >= 2
            and (pid is None or h.pid == pid)
        ]

    def op_accept_lines(self, s, last: bool = False):
        return self.lines_decision(s, "accept", last)

    def op_reject_lines(self, s, last: bool = False):
        return self.lines_decision(s, "reject", last)

    def lines_decision(self, s, action: str, last: bool):
        """Accept or reject some lines of a pending hunk (never all of them): the hunk is split
        into the part and the rest, whose texts the model works out itself."""
        pool = self.splittable(self.last_proposal if last else None)
        if not pool:
            return None
        m = self.rnd.choice(pool)
        lines = [("old", i) for i in range(len(m.old))] + [("new", j) for j in range(len(m.new))]
        chosen = set(self.rnd.sample(lines, self.rnd.randint(1, len(lines) - 1)))
        sel_old = {i for side, i in chosen if side == "old"}
        sel_new = {j for side, j in chosen if side == "new"}
        base = self.base(self.files[m.file])
        if m.marred or (m.old and not self.intact(base, m.old)) or (not m.old and m.after_first not in (*base, None)):
            return None  # (its lines or its place are not all in the base: beyond this model)
        at = self.find(base, m.old) if m.old else None
        end = None if at is None else at + len(m.old)
        after = m.after_first if not m.old else (base[end] if end is not None and end < len(base) else None)
        first = at if at is not None else (base.index(after) if after is not None else len(base))
        before = base[first - 1] if first > 0 else None
        if m.after_last is not None:  # a part split again: what it goes after, as the model knows it
            before = m.after_last
        made = stage_lines(m.old, m.new, sel_old, sel_new)
        if action == "accept":
            rest = (made, m.new)
        else:
            rest = (
                m.old,
                stage_lines(m.old, m.new, set(range(len(m.old))) - sel_old, set(range(len(m.new))) - sel_new),
            )
        if made == m.old or rest[0] == rest[1]:
            # A part that changes nothing (InvalidParams), or that is the whole hunk in effect (a
            # part's lines may repeat its siblings'): tests/e2e/test_parts.py has those.
            return None
        specs = ((*trimmed(m.old, made, after, before), False), (*trimmed(*rest, after, before), action == "accept"))
        params = {
            "hunkId": m.id,
            "old": [[i, i] for i in sorted(sel_old)],
            "new": [[j, j] for j in sorted(sel_new)],
            "requestId": self.request_id(),
        }
        if action == "reject":
            params["feedback"] = self.rnd.choice(FEEDBACKS)
        command = f"stet.{action}Lines"
        self.note(f"{command} {json.dumps(params, ensure_ascii=False)[:160]}")

        def answered(ans):
            if isinstance(ans, JsonRpcException):
                if ans.code == -32002 and "stale" in m.statuses:
                    return  # it was stale: only a pending hunk is split, nothing changed
                self.violation(f"{command} of {m.id} ({sorted(m.statuses)}) answered {ans.code}: {ans.message}")
                raise Violation()
            if ans["rest"] is None:
                self.violation(f"{command} of some lines of {m.id} decided the whole hunk")
                raise Violation()
            self.add_parts(m, specs, [ans["part"], ans["rest"]])
            self.acked.append((command, params, [ans["part"]["id"], ans["rest"]["id"]]))

        def unknown():
            m.statuses = m.statuses | {"superseded"}
            self.maybe_splits[m.id] = specs

        return s.command(command, params), answered, unknown

    def _file_pool(self, f: MFile, statuses: set[str]):
        return lambda: [h for h in self.hunks.values() if h.file == f.name and h.statuses & statuses]

    def op_accept_file(self, s):
        f = self.rnd.choice(list(self.files.values()))
        return self.decision(s, "stet.acceptFile", "accept", {"uri": f.uri}, None, self._file_pool(f, {"pending"}))

    def op_reject_file(self, s):
        f = self.rnd.choice(list(self.files.values()))
        return self.decision(
            s,
            "stet.rejectFile",
            "reject",
            {"uri": f.uri, "feedback": "whole file no"},
            None,
            self._file_pool(f, {"pending", "stale"}),
        )

    def op_accept_all(self, s):
        if not self.proposals:
            return None
        pid = self.rnd.choice(sorted(self.proposals))
        pool = lambda: [h for h in self.hunks.values() if h.pid == pid and "pending" in h.statuses]  # noqa: E731
        return self.decision(s, "stet.acceptAll", "accept", {"proposalId": pid}, None, pool)

    def op_replay(self, s):
        """A decision sent again with the same requestId (a client retrying): it changes nothing."""
        if not self.acked:
            return None
        command, params, ids = self.rnd.choice(self.acked)
        self.note(f"replay {command} {params['requestId']}")
        self.stats.replays += 1

        def answered(ans):
            if isinstance(ans, JsonRpcException):
                self.violation(f"replay of {params['requestId']} answered an error: {ans.code} {ans.message}")
                raise Violation()
            if sorted(h["id"] for h in answered_states(ans)) != sorted(ids):
                self.violation(f"replay of {params['requestId']} concerns other hunks: {ans} vs {ids}")
            for h in answered_states(ans):
                m = self.lookup(h["id"])
                if h["status"] not in m.statuses:
                    self.violation(f"replay of {params['requestId']} changed {h['id']} to {h['status']}")
                    raise Violation()

        return s.command(command, params), answered, lambda: None

    # other processes on the same store
    def op_cli(self, s):
        """`stet accept|reject|undo` from a terminal while the server runs: another writer on the
        store (only for hunks of files no editor has open: an open buffer is its window's)."""
        pool = [h for h in self.hunks.values() if not self.is_open(self.files[h.file])]
        if self.fhunks and (not pool or self.rnd.random() < 0.3):  # a file operation, from a terminal
            pool = list(self.fhunks.values())
        if not pool:
            return None
        h = self.rnd.choice(pool)
        action = self.rnd.choice(["accept", "accept", "reject", "undo"])
        if action == "undo" and not self.undoable(h):
            action = "accept"
        rid = self.request_id()
        args = [action, h.id, "--request-id", rid, "--json"] + (
            ["--feedback", self.rnd.choice(FEEDBACKS[:6])] if action == "reject" else []
        )
        self.note(f"cli {' '.join(args[:4])}")
        if isinstance(h, MHunk):
            self.files[h.file].quiet_after = time.monotonic() + 1e9  # no outside writes while the CLI may write it
        return self.cli_decision(h, action, args)

    async def cli_decision(self, h: MHunk | FHunk, action: str, args: list[str]) -> None:
        # The workspace has two folders: the terminal says so, as docs/cli.md asks.
        killer = None
        if RESIDENT.get():
            self.stats.resident_calls += 1
            if self.rnd.random() < 0.5:  # the resident dies while the call may be in flight
                delay = self.rnd.uniform(0.0, 0.12)
                killer = asyncio.get_running_loop().call_later(delay, self.kill_resident)
        code, out, err = await run_cli(
            self.root, *args[:1], "--root", str(self.root), "--root", str(self.root2), *args[1:]
        )
        if killer is not None:
            killer.cancel()
        if isinstance(h, MHunk):
            self.files[h.file].quiet_after = time.monotonic() + 0.6
        answer = json.loads(out) if code in (0, 1) and out.startswith("{") else None
        # Exit 1 with `notTaken` is a decision recorded whose edit did not take (docs/cli.md): a
        # blocked create goes stale. Its states are the truth as much as those of an exit 0.
        if code == 0 or answer is not None and answer.get("notTaken"):
            for state in answer["hunks"]:
                m = self.lookup(state["id"])
                if code == 1 and state["status"] not in m.statuses:
                    self.violation(f"stet {' '.join(args)} left {state['id']} {state['status']}: {answer['notTaken']}")
                    raise Violation()
                m.statuses = closure({state["status"]})
                m.feedback = {state["feedback"]}
                m.texts = {self.applied_tokens(state)}
            return
        if code == 1 and '"Conflict"' in out or '"UnknownHunk"' in out:
            return  # refused: nothing changed
        if code == -signal.SIGKILL:
            return
        self.violation(f"stet {' '.join(args)} exited {code}: {out[-300:]} {err[-300:]}")
        raise Violation()

    def op_inbox(self, s, only: MFile | None = None):
        """An agent drops a proposal file into .stet/inbox/; the server ingests it exactly once.

        The agent reads the files on disk: only files whose editor buffer (if any) holds what
        the disk holds. A file's unsaved typing makes its lines mean two things, and which one
        the server takes depends on whether the buffer outlives the proposal's ingestion."""
        pool = [f for f in self.files.values() if not self.is_open(f) or self.actual(f) == read(f.path)]
        if not pool or (only is not None and only not in pool):
            return None
        built = self.build_proposal(only, pool)
        if built is None:
            return None
        pid, changes, specs = built
        self.note(f"inbox {pid}: {[(x[0], x[1], x[2]) for x in specs]}")
        self.maybe_proposals[pid] = specs
        folder = self.root / ".stet" / "inbox"
        folder.mkdir(parents=True, exist_ok=True)
        edit = {"changes": {u: [{"range": r, "newText": t} for r, t in edits] for u, edits in changes.items()}}
        tmp = folder / f"{pid}.json.tmp"
        tmp.write_text(json.dumps({"edit": edit}))
        os.replace(tmp, folder / f"{pid}.json")
        return self.inbox_settled(s)

    async def inbox_settled(self, s: Session | None, timeout: float = 30) -> None:
        """Wait until the inbox holds no proposal file; a server that dies meanwhile is a fault."""
        folder = self.root / ".stet" / "inbox"
        deadline = time.monotonic() + timeout
        while any(folder.glob("*.json")) if folder.exists() else False:
            if s is not None and s.client._server.returncode is not None:
                raise ServerDied(s.client._server.returncode)
            if time.monotonic() > deadline:
                self.violation(f"inbox files never ingested: {[p.name for p in folder.glob('*.json')]}")
                raise Violation()
            await asyncio.sleep(0.05)
        failed = list((folder / "failed").glob("*.error")) if (folder / "failed").exists() else []
        if failed:
            self.violation(f"inbox refused a valid proposal: {failed[0].read_text()[:300]}")
            raise Violation()

    def kill_resident(self) -> bool:
        """SIGKILL the workspace's resident process, if one runs."""
        try:
            pid = int((self.root / ".stet" / "resident.pid").read_text().strip() or 0)
        except (OSError, ValueError) as exc:
            self.note(f"resident kill: no pid ({exc})")
            return False
        if pid <= 0:
            self.note("resident kill: none runs")
            return False
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            self.note(f"resident kill: {pid} gone")
            return False
        self.stats.resident_kills += 1
        return True

    async def cli_task_fault(self) -> None:
        """`stet task start` killed at task:after-commit, then retried with its requestId: one task."""
        tid, rid = f"T{self.seed}-{self.round}", f"task-{self.seed}-{self.round}"
        args = ["task", "start", "--id", tid, "--request-id", rid, "a task", "--json"]
        code, out, err = await run_cli(self.root, *args, env={"STET_FAULT": "task:after-commit"})
        if code != -signal.SIGKILL:
            self.violation(f"task:after-commit did not fire (exit {code}): {err[-300:]}")
            raise Violation()
        self.stats.kills += 1
        self.stats.fault_kills["task:after-commit"] = self.stats.fault_kills.get("task:after-commit", 0) + 1
        code, out, err = await run_cli(self.root, *args)
        tasks = json.loads((await run_cli(self.root, "task", "list", "--json"))[1])["tasks"]
        if code != 0 or [t["id"] for t in tasks].count(tid) != 1:
            self.violation(f"task {tid} after a kill and a retry: exit {code}, tasks {[t['id'] for t in tasks]}")
            raise Violation()
        self.integrity()

    # the editor
    def op_open(self, s, f: MFile | None = None):
        closed = [f for f in self.files.values() if not self.is_open(f)]
        if not closed or f is not None and self.is_open(f):
            return None
        f = f or self.rnd.choice(closed)
        self.note(f"open {f.name}")
        f.buf = list(f.disk)  # first: the editor has the buffer even when telling a dead server fails
        s.open(f.path)
        return None

    def op_close(self, s, f: MFile | None = None, save: bool | None = None):
        opened = [f for f in self.files.values() if self.is_open(f)]
        if not opened or f is not None and not self.is_open(f):
            return None
        f = f or self.rnd.choice(opened)
        if save if save is not None else self.rnd.random() < 0.5:
            self.op_save(s, f)
        self.note(f"close {f.name}")
        # The model first, as for open and save: the editor closes its buffer even when telling a
        # dead server fails.
        f.buf = None
        f.quiet_after = time.monotonic() + 0.6  # Stet writes what the buffer held of accepted work
        s.close(f.path)
        return None

    def op_save(self, s, f: MFile | None = None):
        opened = [f for f in self.files.values() if self.is_open(f)]
        if f is None:
            if not opened:
                return None
            f = self.rnd.choice(opened)
        self.note(f"save {f.name}")
        # The model first: the editor writes the file even when telling a dead server it saved
        # fails (the kill comes between the two; the model once kept the old text).
        f.disk = list(f.buf)
        s.save(f.path)
        return None

    def neutral_change(self, f: MFile) -> tuple[str, int, str | None] | None:
        """A change of the base away from every hunk: (kind, index in base, new token)."""
        base = self.base(f)
        zones = self.zones(f)
        kind = self.rnd.choice(["modify", "insert", "delete"])
        if kind == "insert":
            spots = [
                p
                for p in range(len(base) + 1)
                if (p == 0 and "^" not in zones or p > 0 and base[p - 1] not in zones)
                and (p == len(base) and "$" not in zones or p < len(base) and base[p] not in zones)
            ]
        else:
            spots = [p for p in range(len(base)) if base[p] not in zones]
            if kind == "delete" and len(base) < 20:
                return None
        if not spots:
            return None
        p = self.rnd.choice(spots)
        return kind, p, None if kind == "delete" else self.token(f, "T")

    def edit_base(self, f: MFile, change, lines: list[str]) -> tuple[dict, str, list[str]]:
        """Apply `change` to the model's base; the LSP range and text of that change in `lines` (the actual text)."""
        base = self.base(f)
        kind, p, tok = change
        if kind == "insert":
            line = lines.index(base[p]) if p < len(base) else len(lines)
            base.insert(p, tok)
            return rng(line, 0, line, 0), tok + f.eol, base
        line = lines.index(base[p])
        old = base[p]
        if kind == "delete":
            del base[p]
            return rng(line, 0, line + 1, 0), "", base
        base[p] = tok
        width = len(old.encode("utf-16-le")) // 2
        return rng(line, 0, line, width), tok, base

    def op_type(self, s):
        opened = [f for f in self.files.values() if self.is_open(f)]
        if not opened:
            return None
        f = self.rnd.choice(opened)
        change = self.neutral_change(f)
        if change is None:
            return None
        lines = self.tokens_of(self.actual(f))
        r, text, _ = self.edit_base(f, change, lines)
        self.note(f"type in {f.name}: {change}")
        s.type(f.uri, r, text)
        return None

    def op_type_near(self, s):
        """The developer types a line directly above or below a hunk (pending or applied), or
        inside its trailing context: its tracked position must hold, its range must stay on its
        text, and deciding it afterwards must work."""
        cands = []
        for m in self.hunks.values():
            f = self.files[m.file]
            if not self.is_open(f) or not m.old or m.split_from:
                continue  # (the parts of a hunk share its lines and context: typing there is typing in theirs)
            repl = next(iter(m.texts)) if len(m.texts) == 1 else None
            if m.statuses == closure({"pending"}) and self.intact(self.base(f), m.old):
                cands.append((m, f, m.old))
            elif m.statuses == {"applied"} and (repl or m.new):
                cands.append((m, f, repl or m.new))
        if not cands:
            return None
        m, f, shown = self.rnd.choice(cands)
        base = self.base(f)
        lines = self.tokens_of(self.actual(f))
        if shown[0] not in lines:
            return None
        start = lines.index(shown[0])
        end = start + len(shown)
        i = self.find(base, m.old) or 0
        where = self.rnd.choice(["above", "below", "below", "in-context"])
        if where == "above":
            at, q = start, i
        elif where == "below":
            at, q = end, i + len(m.old)
        else:  # after the first line of its trailing context
            q = i + len(m.old) + 1
            if q > len(base) or base[q - 1] not in lines:
                return None
            at = lines.index(base[q - 1]) + 1
        tok = self.token(f, "Y")
        base.insert(q, tok)
        m.zone = m.zone | {tok}
        self.note(f"type {where} {m.id} ({sorted(m.statuses)}) in {f.name}: {tok} at line {at}")
        s.type(f.uri, rng(at, 0, at, 0), tok + f.eol)
        return None

    def op_outside(self, s):
        closed = [f for f in self.files.values() if not self.is_open(f) and f.quiet_after < time.monotonic()]
        if not closed:
            return None
        f = self.rnd.choice(closed)
        change = self.neutral_change(f)
        if change is None:
            return None
        text = self.actual(f)
        lines = self.tokens_of(text)
        kind, p, tok = change
        old_token = self.base(f)[p] if p < len(self.base(f)) else None
        self.edit_base(f, change, lines)
        if kind == "insert":
            at = lines.index(old_token) if old_token is not None else len(lines)
            lines.insert(at, tok)
        elif kind == "delete":
            lines.remove(old_token)
        else:
            lines[lines.index(old_token)] = tok
        self.note(f"outside change to {f.name}: {change}")
        write(f.path, self.render(lines, f.eol))
        return None

    def op_mar(self, s):
        """The developer changes a line of a pending hunk's old text: the hunk must go stale."""
        cands = [
            h
            for h in self.hunks.values()
            # (a part's lines may be in its applied sibling's text: not marred here)
            if h.old and h.statuses <= {"pending", "stale"} and len(h.marred) < len(h.old) and not h.split_from
        ]
        cands = [
            h for h in cands if self.is_open(self.files[h.file]) or self.files[h.file].quiet_after < time.monotonic()
        ]
        if not cands:
            return None
        h = self.rnd.choice(cands)
        f = self.files[h.file]
        base = self.base(f)
        present = [t for t in h.old if t in base]
        if not present:
            return None
        t = self.rnd.choice(present)
        p = base.index(t)
        lines = self.tokens_of(self.actual(f))
        new = self.token(f, "M")
        r, text, _ = self.edit_base(f, ("modify", p, new), lines)
        h.marred[new] = t
        h.zone = h.zone | {new}
        self.note(f"mar {h.id} in {f.name}: {t} -> {new}")
        self.write_change(s, f, r, text)
        return None

    def op_unmar(self, s):
        """... and changes it back: the hunk is found again."""
        cands = [h for h in self.hunks.values() if h.marred]
        cands = [
            h for h in cands if self.is_open(self.files[h.file]) or self.files[h.file].quiet_after < time.monotonic()
        ]
        if not cands:
            return None
        h = self.rnd.choice(cands)
        f = self.files[h.file]
        base = self.base(f)
        pairs = [(new, orig) for new, orig in h.marred.items() if new in base]
        if not pairs:
            return None
        new, orig = self.rnd.choice(pairs)
        lines = self.tokens_of(self.actual(f))
        r, text, _ = self.edit_base(f, ("modify", base.index(new), orig), lines)
        del h.marred[new]
        self.note(f"unmar {h.id} in {f.name}: {new} -> {orig}")
        self.write_change(s, f, r, text)
        return None

    def write_change(self, s: Session, f: MFile, r: dict, text: str) -> None:
        if self.is_open(f):
            s.type(f.uri, r, text)
        else:
            from support.harness import apply_lsp_edits

            write(f.path, apply_lsp_edits(read(f.path), [(r, text)]))

    # --- file operations (CreateFile / RenameFile / DeleteFile) ---------------------------
    def new_free_file(self) -> Path:
        """A file the developer made, for a later delete or rename proposal to use."""
        d = self.rnd.choice(self.fop_dirs)
        self.counter += 1
        path = d / ("sub" if self.rnd.random() < 0.3 else "") / f"f{self.counter}.txt"
        eol = self.rnd.choice(["\n", "\n", "\r\n"])
        lines = tuple(f"F{self.seed}x{self.counter}L{i}" for i in range(self.rnd.randint(1, 5)))
        path.parent.mkdir(parents=True, exist_ok=True)
        write(path, self.render(lines, eol))
        self.free[path] = (lines, eol)
        return path

    def fresh_path(self, deep: bool = False) -> Path:
        self.counter += 1
        d = self.rnd.choice(self.fop_dirs)
        sub = f"n{self.counter}/deep" if deep else self.rnd.choice(["", "", "new", f"n{self.counter}/deep"])
        return d / sub / f"g{self.counter}.txt"

    def fop_expected(self, status: dict[str, str]) -> tuple[dict[Path, str], list[str]]:
        """What the fop folders must hold, given each file operation's status; and the
        operations that destroyed or overwrote the developer's work."""
        files = {path: self.render(lines, eol) for path, (lines, eol) in self.free.items()}
        bad = []
        for op in self.fops.values():
            if op.block is not None and op.block[1] == "file":
                files[op.block[0]] = BLOCKER
            applied = status[op.hunks["op"]] == "applied"
            if op.kind == "create":
                if applied:
                    if op.mine is not None:
                        bad.append(f"create {op.pid} applied over the developer's file {op.path}")
                    files[op.path] = self.render(op.content, op.eol)
                elif op.mine is not None:
                    files[op.path] = self.render(op.mine, op.eol)
            elif op.kind == "delete":
                now = op.content + (op.mine or ())
                if applied:
                    if op.mine is not None:
                        bad.append(f"delete {op.pid} applied although the developer had changed {op.path}")
                else:
                    files[op.path] = self.render(now, op.eol)
            else:
                lines = list(op.content)
                if op.edit and status[op.hunks["edit"]] == "applied":
                    lines[lines.index(op.edit[0])] = op.edit[1]
                if applied:
                    if op.mine is not None:
                        bad.append(f"rename {op.pid} applied although the developer had a file at {op.target}")
                    files[op.target] = self.render(lines, op.eol)
                else:
                    files[op.path] = self.render(lines, op.eol)
                    if op.mine is not None:
                        files[op.target] = self.render(op.mine, op.eol)
        return files, bad

    def fop_disk(self) -> dict[Path, str]:
        out = {}
        for d in self.fop_dirs:
            for dirpath, dirnames, filenames in os.walk(d):
                dirnames[:] = [n for n in dirnames if n != ".stet"]
                for n in filenames:
                    p = Path(dirpath) / n
                    try:
                        out[p] = p.read_bytes().decode("utf-8", "replace")
                    except OSError as exc:
                        out[p] = f"<unreadable {exc}>"
        return out

    def check_fops(self, states: list[dict]) -> list[str]:
        by_id = {h["id"]: h for h in states}
        problems = []
        for hid, m in self.fhunks.items():
            h = by_id[hid]
            if h["status"] not in m.statuses:
                problems.append(
                    f"{hid} ({m.op.kind} {m.role}) is {h['status']}, acknowledged history allows only {sorted(m.statuses)}"
                )
            if h["status"] == "accepted":
                problems.append(f"{hid} ({m.op.kind} {m.role}) stays accepted: never carried out nor found stale")
            if h["feedback"] not in m.feedback:
                problems.append(f"{hid} feedback {h['feedback']!r:.60} not among {[str(x)[:40] for x in m.feedback]}")
        status = {hid: by_id[hid]["status"] for hid in self.fhunks}
        for op in self.fops.values():
            st = status[op.hunks["op"]]
            if st == "pending" and op.mine is not None:
                problems.append(f"{op.kind} {op.pid} is pending although the developer's work is in its way")
            if st == "pending" and op.block is not None:
                problems.append(f"{op.kind} {op.pid} is pending although a {op.block[1]} blocks its folder")
            if st == "stale" and op.mine is None and op.block is None:
                problems.append(f"{op.kind} {op.pid} is stale although nothing is in its way")
            if op.edit:
                e = by_id[op.hunks["edit"]]
                if e["status"] == "stale":
                    problems.append(f"edit {e['id']} of rename {op.pid} is stale although its old text is there")
                where = op.target if st == "applied" else op.path
                if e["uri"] != uri(where):
                    problems.append(
                        f"edit {e['id']} of rename {op.pid} is listed at {e['uri']}, its file is at {uri(where)}"
                    )
        expected, bad = self.fop_expected(status)
        problems += bad
        if fingerprint(self.outside) != self.outside_before:
            problems.append(f"something was written outside the workspace, in {self.outside}")
        actual = self.fop_disk()
        for p in sorted(set(expected) | set(actual)):
            if expected.get(p) != actual.get(p):
                problems.append(
                    f"{p.relative_to(p.parents[1]) if len(p.parents) > 1 else p}: expected "
                    f"{expected.get(p)!r:.80}, found {actual.get(p)!r:.80}"
                )
        return problems

    def adopt_fop(self, op: FOp, got: list[dict]) -> None:
        roles = {"create": ["op"], "delete": ["op"], "rename": ["op", "edit"] if op.edit else ["op"]}[op.kind]
        want = {"op": op.kind, "edit": "edit"}
        for role in roles:
            match = [h for h in got if h["kind"] == want[role]]
            ok = len(match) == 1 and match[0]["uri"] == uri(op.path)
            if ok and role == "op" and op.kind == "create":
                ok = match[0]["newText"] == self.render(op.content, op.eol)
            elif ok and role == "op" and op.kind == "delete":
                ok = match[0]["oldText"] == self.render(op.content, op.eol)
            elif ok and role == "op":
                ok = match[0]["newUri"] == uri(op.target)
            elif ok:
                ok = (match[0]["oldText"], match[0]["newText"]) == (op.edit[0] + op.eol, op.edit[1] + op.eol)
            if not ok:
                self.violation(f"file-operation proposal {op.pid} came back partial or different: {role} vs {got}")
                raise Violation()
            op.hunks[role] = match[0]["id"]
            self.fhunks[match[0]["id"]] = FHunk(match[0]["id"], op, role)
        if len(got) != len(roles):
            self.violation(f"file-operation proposal {op.pid}: {len(got)} hunks stored, {len(roles)} proposed")
            raise Violation()
        self.fops[op.pid] = op
        self.stats.fop_proposals += 1

    def op_fop_propose(self, s, kind: str | None = None, deep: bool = False):
        rnd = self.rnd
        kind = kind or rnd.choice(["create", "create", "delete", "rename", "rename", "rename"])
        pid = f"fp{self.seed}-{self.round}-{self.counter}"
        self.counter += 1
        if kind == "create":
            path = self.fresh_path(deep)
            eol = rnd.choice(["\n", "\r\n"])
            lines = tuple(self.fresh_line() for _ in range(rnd.randint(1, 4)))
            op = FOp(pid, kind, path, None, lines, eol)
            changes = [
                {"kind": "create", "uri": uri(path)},
                {
                    "textDocument": {"uri": uri(path), "version": None},
                    "edits": [{"range": rng(0, 0, 0, 0), "newText": self.render(lines, eol)}],
                },
            ]
        else:
            if not self.free or rnd.random() < 0.15:
                self.new_free_file()
            path = rnd.choice(sorted(self.free))
            lines, eol = self.free.pop(path)
            if kind == "delete":
                op = FOp(pid, kind, path, None, lines, eol)
                changes = [{"kind": "delete", "uri": uri(path)}]
            else:
                target = self.fresh_path(deep)
                op = FOp(pid, kind, path, target, lines, eol)
                changes = [{"kind": "rename", "oldUri": uri(path), "newUri": uri(target)}]
                if rnd.random() < 0.6:
                    i = rnd.randrange(len(lines))
                    op.edit = (lines[i], self.fresh_line())
                    op.edit_first = rnd.random() < 0.3
                    edit = {
                        "textDocument": {"uri": uri(path if op.edit_first else target), "version": None},
                        "edits": [{"range": rng(i, 0, i + 1, 0), "newText": op.edit[1] + rnd.choice(["\n", eol])}],
                    }
                    changes = [edit, *changes] if op.edit_first else [*changes, edit]
        op.params = {"proposalId": pid, "edit": {"documentChanges": changes}, "message": f"file op {kind}"}
        self.note(f"fop propose {pid}: {kind} {op.path.name} -> {op.target.name if op.target else ''} edit={op.edit}")

        def answered(ans):
            if isinstance(ans, JsonRpcException):
                self.violation(f"file-operation proposal {pid} refused: {ans.code} {ans.message}")
                raise Violation()
            self.adopt_fop(op, ans["hunks"])
            self.last_fop = pid

        def unknown():
            self.maybe_fops[pid] = op

        return s.request("stet/propose", op.params), answered, unknown

    def fresh_line(self) -> str:
        self.counter += 1
        return f"N{self.seed}x{self.counter}"

    def fpick(self, statuses: set[str], n: int = 1) -> list[FHunk]:
        pool = [h for h in self.fhunks.values() if h.statuses & statuses]
        return self.rnd.sample(pool, min(n, len(pool))) if pool else []

    def op_fop_accept(self, s):
        hs = self.fpick({"pending", "accepted", "applied", "stale"}, self.rnd.choice([1, 1, 2]))
        return self.decision(s, "stet.accept", "accept", {"hunkIds": [h.id for h in hs]}, hs) if hs else None

    def op_fop_accept_new(self, s):
        hs = [h for h in self.fhunks.values() if h.op.pid == self.last_fop and "pending" in h.statuses]
        return self.decision(s, "stet.accept", "accept", {"hunkIds": [h.id for h in hs]}, hs) if hs else None

    def op_fop_accept_all(self, s):
        if not self.fops:
            return None
        pid = self.rnd.choice(sorted(self.fops))
        pool = lambda: [h for h in self.fhunks.values() if h.op.pid == pid and "pending" in h.statuses]  # noqa: E731
        return self.decision(s, "stet.acceptAll", "accept", {"proposalId": pid}, None, pool)

    def op_fop_reject(self, s):
        hs = self.fpick({"pending", "stale", "rejected"})
        if not hs:
            return None
        return self.decision(
            s, "stet.reject", "reject", {"hunkIds": [h.id for h in hs], "feedback": self.rnd.choice(FEEDBACKS)}, hs
        )

    def op_fop_undo(self, s):
        hs = self.fpick({"accepted", "applied", "rejected"}, self.rnd.choice([1, 1, 2]))
        return self.decision(s, "stet.undo", "undo", {"hunkIds": [h.id for h in hs]}, hs) if hs else None

    def op_fop_mar(self, s):
        """The developer's work gets in the way of a pending file operation: their own file where
        a create or a rename would put one, a line added to a file proposed for deletion."""
        cands = [
            op
            for op in self.fops.values()
            if op.mine is None
            and op.block is None
            and all(self.fhunks[h].statuses <= {"pending", "stale", "rejected"} for h in op.hunks.values())
        ]
        if not cands:
            return None
        op = self.rnd.choice(cands)
        if op.kind == "delete":
            op.mine = (self.fresh_line(),)
            write(op.path, self.render(op.content + op.mine, op.eol))
        else:
            op.mine = (self.fresh_line(), self.fresh_line())
            where = op.path if op.kind == "create" else op.target
            where.parent.mkdir(parents=True, exist_ok=True)
            write(where, self.render(op.mine, op.eol))
        for h in op.hunks.values():
            self.fhunks[h].statuses = closure(self.fhunks[h].statuses)
        self.note(f"fop mar {op.pid} ({op.kind}): {op.mine}")
        return None

    def op_fop_unmar(self, s):
        cands = [
            op
            for op in self.fops.values()
            if op.mine is not None
            and all(self.fhunks[h].statuses <= {"pending", "stale", "rejected"} for h in op.hunks.values())
        ]
        if not cands:
            return None
        op = self.rnd.choice(cands)
        if op.kind == "delete":
            write(op.path, self.render(op.content, op.eol))
        else:
            os.unlink(op.path if op.kind == "create" else op.target)
        op.mine = None
        self.note(f"fop unmar {op.pid} ({op.kind})")
        return None

    def op_fop_block(self, s, only: str | None = None):
        """A hostile agent blocks a pending create or rename: the first folder of its new path
        below the fop folder becomes a symlink to a folder outside the workspace, or a plain
        file. Accepting it then must make it stale, and nothing may land outside."""
        cands = []
        for op in self.fops.values():
            if only is not None and op.pid != only:
                continue
            dest = op.path if op.kind == "create" else op.target if op.kind == "rename" else None
            if dest is None or op.mine is not None or op.block is not None:
                continue
            if not all(self.fhunks[h].statuses <= {"pending", "stale", "rejected"} for h in op.hunks.values()):
                continue
            top = next((d for d in self.fop_dirs if dest.is_relative_to(d)), None)
            rel = dest.relative_to(top).parts if top else ()
            # Only a folder of its own (n<k>/deep/...): nothing else is, or will be, under it.
            if len(rel) >= 3 and rel[0].startswith("n") and not os.path.lexists(top / rel[0]):
                cands.append((op, top / rel[0]))
        if not cands:
            return None
        op, where = self.rnd.choice(cands)
        kind = self.rnd.choice(["symlink", "file"])
        if kind == "symlink":
            os.symlink(self.outside, where)
        else:
            write(where, BLOCKER)
        op.block = (where, kind)
        self.stats.blocks += 1
        for h in op.hunks.values():
            self.fhunks[h].statuses = closure(self.fhunks[h].statuses)
        self.note(f"fop block {op.pid} ({op.kind}): {kind} at {where.name}")
        return None

    def op_fop_unblock(self, s):
        cands = [op for op in self.fops.values() if op.block is not None]
        if not cands:
            return None
        op = self.rnd.choice(cands)
        where, kind = op.block
        os.unlink(where)
        op.block = None
        for h in op.hunks.values():
            self.fhunks[h].statuses = closure(self.fhunks[h].statuses)
        self.note(f"fop unblock {op.pid} ({kind} at {where.name} removed)")
        return None

    # a replayed proposal, at the start of a round
    async def replay(self, s: Session) -> None:
        if not self.proposals and not self.acked:
            return
        before = (await s.hunks(), {f.name: self.actual(f) for f in self.files.values()}, self.fop_disk())
        if self.fops and self.rnd.random() < 0.3:
            pid = self.rnd.choice(sorted(self.fops))
            op = self.fops[pid]
            self.note(f"replay file-operation proposal {pid}")
            try:
                ans = await s.request("stet/propose", op.params)
            except JsonRpcException as exc:
                # Its folder is a symlink out now: the uri leads outside, and is refused as such.
                if not (exc.code == -32003 and op.block is not None and op.block[1] == "symlink"):
                    self.violation(f"replayed file-operation proposal {pid} refused: {exc.code} {exc.message}")
                    raise Violation() from None
            else:
                if sorted(h["id"] for h in ans["hunks"]) != sorted(op.hunks.values()):
                    self.violation(f"replayed file-operation proposal {pid} answered other hunks")
        elif self.proposals and self.rnd.random() < 0.5:
            pid = self.rnd.choice(sorted(self.proposals))
            p = self.proposals[pid]
            self.note(f"replay proposal {pid}")
            ans = await s.propose(pid, p["changes"])
            if sorted(h["id"] for h in ans["hunks"]) != p["ids"]:
                self.violation(f"replayed proposal {pid} answered other hunks")
        elif self.acked:
            command, params, ids = self.rnd.choice(self.acked)
            self.note(f"replay {command} {params['requestId']}")
            ans = await s.command(command, params)
            if sorted(h["id"] for h in answered_states(ans)) != sorted(ids):
                self.violation(f"replay of {params['requestId']} concerns other hunks")
        self.stats.replays += 1
        after = (await s.hunks(), {f.name: self.actual(f) for f in self.files.values()}, self.fop_disk())
        if before != after:
            self.violation(f"a replay changed something: {self.first_difference(before, after)}")
            raise Violation()

    @staticmethod
    def first_difference(a, b) -> str:
        for x, y in zip(a[0], b[0]):
            if x != y:
                return f"{x} -> {y}"
        return "file contents" if a[1] != b[1] else "file-operation files" if a[2] != b[2] else "hunk count"


async def run_one(
    seed: int,
    rounds: int,
    stats: Stats,
    verbose: bool = False,
    keep: bool = False,
    force_point: str | None = None,
    deadline: float | None = None,
    force_mode: str | None = None,
    pg: str | None = None,
    resident: bool = False,
) -> Path:
    RESIDENT.set(resident)
    databases = None
    if pg:  # a fresh database for the run, dropped after it (kept when it failed)
        from support.engines import Databases

        databases = Databases(pg)
        DB.set(databases.new())
    tmp = Path(tempfile.mkdtemp(prefix=f"stet-torture-{seed}-"))
    root = tmp / "ws"
    root.mkdir()
    log = (lambda m: print(f"[{seed}] {m}", file=sys.stderr)) if verbose else None
    run = Run(seed, root, rounds, stats, log, force_point, force_mode)
    run.deadline = deadline
    try:
        await run.run()
    except Exception as exc:  # a defect of the torture itself must not pass for a green run
        stats.violations.append(f"seed {seed} round {run.round}: torture error {type(exc).__name__}: {exc}")
        import traceback

        traceback.print_exc()
        await run.kill()
    if resident:
        await _end_resident(run)
    failed = any(v.startswith(f"seed {seed} ") for v in stats.violations)
    if failed:
        print(f"--- seed {seed}: last steps ---", file=sys.stderr)
        for line in run.history[-40:]:
            print("   ", line, file=sys.stderr)
        print(f"workspace kept at {root}", file=sys.stderr)
        if databases is not None:
            print(f"database kept: {DB.get()}", file=sys.stderr)
    elif not keep:
        shutil.rmtree(tmp, ignore_errors=True)
        if databases is not None:
            databases.drop()
    return root


async def _end_resident(run: Run) -> None:
    """The run's resident goes with it: killed, and waited for (it holds the run's database)."""
    pid_file = run.root / ".stet" / "resident.pid"
    try:
        pid = int(pid_file.read_text().strip() or 0)
    except (OSError, ValueError):
        return
    if pid <= 0:
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        await asyncio.sleep(0.05)


async def torture(
    seeds: list[int],
    rounds: int,
    workers: int,
    seconds: float | None = None,
    verbose: bool = False,
    cover: bool = True,
    pg: str | None = None,
    resident: bool = False,
    load: int | None = None,
) -> Stats:
    """Runs with the given seeds (then fresh ones while time is left), `workers` at a time,
    with `load` busy processes beside them (None: STET_TORTURE_LOAD, else none)."""
    stats = Stats()
    stats.load = from_env() if load is None else load
    with busy(stats.load):
        await _torture(stats, seeds, rounds, workers, seconds, verbose, cover, pg, resident)
    return stats


async def _torture(
    stats: Stats,
    seeds: list[int],
    rounds: int,
    workers: int,
    seconds: float | None,
    verbose: bool,
    cover: bool,
    pg: str | None,
    resident: bool,
) -> None:
    queue = list(seeds)
    next_seed = (max(seeds) + 1) if seeds else 1
    deadline = None if seconds is None else time.monotonic() + seconds

    async def worker():
        nonlocal next_seed
        while True:
            if queue:
                seed = queue.pop(0)
            elif deadline is not None and time.monotonic() < deadline:
                seed, next_seed = next_seed, next_seed + 1
            else:
                return
            await run_one(seed, rounds, stats, verbose, deadline=deadline, pg=pg, resident=resident)

    await asyncio.gather(*(worker() for _ in range(workers)))
    if cover:
        # Points that did not fire yet get short runs of their own, so that every named point
        # is proven at least once (a point no code path reaches any more shows up here).
        missing = [p for p in POINTS if p not in stats.fault_kills]
        for i, point in enumerate(missing):
            for attempt in range(3):
                if point in stats.fault_kills:
                    break
                await run_one(100_000 + 100 * i + attempt, 4, stats, verbose, force_point=point)
        # The hostile faults too: a store removed under the server, a file operation blocked.
        for attempt in range(3):
            if stats.store_losses >= 2:
                break
            await run_one(200_000 + attempt, 4, stats, verbose, force_mode="lost")
        for attempt in range(3):
            if stats.blocks >= 2:
                break
            await run_one(300_000 + attempt, 4, stats, verbose, force_mode="block")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, action="append", help="run this seed (repeatable)")
    ap.add_argument("--rounds", type=int, default=40, help="server lives per run (default 40)")
    ap.add_argument("--workers", type=int, default=2, help="runs in parallel (default 2)")
    ap.add_argument("--soak", action="store_true", help="keep starting runs with new seeds until --seconds")
    ap.add_argument("--seconds", type=float, default=3600)
    ap.add_argument("--verbose", "-v", action="store_true")
    ap.add_argument("--resident", action="store_true", help="terminal calls through the thin client to a resident")
    ap.add_argument(
        "--load",
        type=int,
        default=None,
        metavar="N",
        help=f"N busy processes beside the torture (default: ${ENV}, else 0)",
    )
    ap.add_argument(
        "--pg",
        nargs="?",
        const=os.environ.get("STET_TEST_PG", ""),
        default=None,
        metavar="URL",
        help="the store in PostgreSQL: a database made per run on this cluster (default: $STET_TEST_PG)",
    )
    ap.add_argument("--no-cover", action="store_true", help="no extra runs for fault points that did not fire")
    args = ap.parse_args(argv)
    if args.pg == "":
        ap.error("--pg: give a URL or set STET_TEST_PG")
    seeds = args.seed or [int(time.time()) % 100000]
    started = time.monotonic()
    seconds = args.seconds if args.soak else None
    stats = asyncio.run(
        torture(
            seeds,
            args.rounds,
            args.workers,
            seconds,
            args.verbose,
            cover=not args.no_cover and not args.pg,
            pg=args.pg,
            resident=args.resident,
            load=args.load,
        )
    )
    print(stats.line())
    print(f"fault points fired: {json.dumps(stats.fault_kills, sort_keys=True)}")
    print(f"operations: {json.dumps(stats.ops, sort_keys=True)}")
    print(f"seconds by phase (all workers): {json.dumps({k: round(v, 1) for k, v in stats.timing.items()})}")
    print(f"seconds: {time.monotonic() - started:.0f}")
    for v in stats.violations:
        print("VIOLATION", v)
    return 1 if stats.violations else 0


if __name__ == "__main__":
    sys.exit(main())
