"""Shared pieces of the benchmarks: statistics, the machine, workspaces with pending hunks."""

from __future__ import annotations

import json
import os
import platform
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lspclient import Server, rng
from workload import code_lines, file_uri, scatter_changes, write_file

REPO = Path(__file__).resolve().parent.parent
BENCH = REPO / "benchmarks"
PY = sys.executable
STET = [PY, "-m", "stet", "serve"]
FLOOR = [PY, str(BENCH / "floor_server.py")]


# --- statistics -----------------------------------------------------------------------
def percentile(samples: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of the samples."""
    s = sorted(samples)
    if not s:
        return float("nan")
    k = max(0, min(len(s) - 1, int(round(q / 100 * len(s) + 0.5)) - 1))
    return s[k]


def median(samples: list[float]) -> float:
    s = sorted(samples)
    n = len(s)
    if not n:
        return float("nan")
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def summary(samples: list[float], scale: float = 1000.0) -> dict:
    """median / p99 / min / max / n, in milliseconds by default."""
    return {
        "median": median(samples) * scale,
        "p99": percentile(samples, 99) * scale,
        "min": min(samples) * scale,
        "max": max(samples) * scale,
        "n": len(samples),
    }


def fmt_ms(x: float) -> str:
    if x != x:
        return "–"
    if x >= 100:
        return f"{x:.0f} ms"
    if x >= 10:
        return f"{x:.1f} ms"
    return f"{x:.2f} ms"


def line(name: str, s: dict, floor: dict | None = None) -> str:
    out = f"  {name:44} median {fmt_ms(s['median']):>10}  p99 {fmt_ms(s['p99']):>10}  (n={s['n']})"
    if floor is not None:
        out += f"  ratio {s['median'] / floor['median']:.2f}x"
    return out


# --- the machine ----------------------------------------------------------------------
def machine() -> dict:
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for row in f:
                if row.startswith("model name"):
                    cpu = row.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = "?"
    try:
        with open("/proc/meminfo") as f:
            mem = f"{int(f.readline().split()[1]) / 1024 / 1024:.1f} GiB"
    except OSError:
        pass
    work = workdir_root()
    fs = "?"
    try:
        fs = subprocess.run(["stat", "-f", "-c", "%T", work], capture_output=True, text=True).stdout.strip()
    except OSError:
        pass
    versions = {}
    for mod in ("pygls", "lsprotocol", "aiosqlite"):
        try:
            from importlib.metadata import version

            versions[mod] = version(mod)
        except Exception:
            versions[mod] = "?"
    git = subprocess.run(["git", "--version"], capture_output=True, text=True).stdout.strip()
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory": mem,
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "filesystem": f"{fs} ({work})",
        "git": git,
        **versions,
    }


def compile_server() -> None:
    """Byte-compile Stet's package, as `pip install` does: with PYTHONDONTWRITEBYTECODE set (this
    machine's shells set it) every process would otherwise compile Stet's modules from source
    at each start, which a user's installed Stet never does."""
    subprocess.run([PY, "-m", "compileall", "-q", str(REPO / "server" / "stet")], check=True, capture_output=True)
    for extra in os.environ.get("PYTHONPATH", "").split(os.pathsep):  # an A/B run's other tree
        if extra and os.path.isdir(os.path.join(extra, "stet")):
            subprocess.run([PY, "-m", "compileall", "-q", os.path.join(extra, "stet")], check=True, capture_output=True)


def workdir_root() -> str:
    return os.environ.get("STET_BENCH_DIR") or tempfile.gettempdir()


def fresh_dir(name: str) -> Path:
    path = Path(tempfile.mkdtemp(prefix=f"stet-bench-{name}-", dir=workdir_root()))
    return path


def remove(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)


# --- raw durable commit ---------------------------------------------------------------
class RawCommit:
    """One stdlib-sqlite3 durable commit (WAL, synchronous=FULL): the floor's storage part."""

    def __init__(self, path: Path):
        self.conn = sqlite3.connect(str(path), isolation_level=None)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA synchronous=FULL")
        self.conn.execute("CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)")
        self.n = 0

    def once(self) -> float:
        self.n += 1
        t0 = time.perf_counter()
        self.conn.execute("BEGIN IMMEDIATE")
        self.conn.execute("INSERT INTO t (v) VALUES (?)", (f"decision {self.n}",))
        self.conn.execute("COMMIT")
        return time.perf_counter() - t0

    def close(self) -> None:
        self.conn.close()


# --- workspaces with pending hunks ----------------------------------------------------
FILE_LINES = 120
HUNKS_PER_FILE = 10


def make_files(root: Path, files: int, seed: int = 7, lines: int = FILE_LINES, hunks: int = HUNKS_PER_FILE):
    """`files` files under root/src/dNNN/ and, for each, the text an agent proposes for it
    (`hunks` scattered changes). Returns [(path, base text, proposed text)]."""
    rnd = random.Random(seed)
    out = []
    for k in range(files):
        path = root / "src" / f"d{k // 100:03d}" / f"m{k:05d}.py"
        base = code_lines(lines, rnd, tag=f"m{k}_")
        new = scatter_changes(base, hunks, rnd, tag=f"agent{k}")
        write_file(path, "".join(base))
        out.append((path, "".join(base), "".join(new)))
    return out


def full_replace(base: str, new: str) -> list[dict]:
    n = base.count("\n")
    return [{"range": rng(0, 0, n, 0), "newText": new}]


async def propose_files(server: Server, files, batch: int = 500, prefix: str = "seed") -> float:
    """Propose the files' new texts, `batch` files per proposal; returns the seconds taken."""
    t0 = time.perf_counter()
    for i in range(0, len(files), batch):
        chunk = files[i : i + batch]
        edit = {"changes": {file_uri(p): full_replace(base, new) for p, base, new in chunk}}
        await server.request("stet/propose", {"proposalId": f"{prefix}-{i}", "edit": edit})
    return time.perf_counter() - t0


async def start_stet(root: Path, log: Path | None = None, db: str | None = None) -> tuple[Server, dict, float]:
    """Spawn `stet serve` in root; returns (server, stet/restored params, seconds to restored).
    `db`: the store (STET_DB), when not the workspace's .stet/stet.db (bench_engines: PostgreSQL)."""
    env = {"STET_LOG": "WARNING", **({"STET_DB": db} if db else {})}
    server = Server(STET, str(root), env=env, stderr_path=str(log) if log else None)
    await server.spawn()
    restored = server.wait_notification("stet/restored")
    await server.initialize(str(root))
    params, t_restored = await restored
    return server, params, t_restored - server.spawned_at


def save_json(name: str, data: dict) -> Path:
    out = REPO / "docs" / "benchmarks" / f"{name}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, indent=1, sort_keys=True))
    return out


def load_json(name: str) -> dict | None:
    path = REPO / "docs" / "benchmarks" / f"{name}.json"
    return json.loads(path.read_text()) if path.exists() else None
