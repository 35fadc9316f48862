"""Benchmark 11: the baseline an agent's work is compared with, and what `stet run` costs around
the agent. Process wall times, median of interleaved rounds, against floors measured in the same
run: `python -c pass` of the same venv (the least any Python command costs), `true` (the least an
agent costs), and the copy Stet must make (read every file of the workspace, write them into one
file, one fsync: done inside this process, so no start-up in it).

- `stet snapshot --all` of a git repository of 2,000 files (7.9 MB; a store exists, the contents
  are new to it);
- `stet run -- date +%s%N` on a repository of 100 files with 1,000 pending hunks in its store: the
  time from this process starting `stet` until the agent prints its start time (everything Stet does
  before the agent runs), and end to end; as users run it (the thin client: the workspace's resident
  takes the baseline, the client starts the agent, the resident captures) and in its own process
  (STET_RESIDENT=off: start, imports, opening the review, the baseline, all in `stet`'s process);
- `stet run -- date +%s%N` on the 2,000-file repository, end to end (the baseline before, the
  capture - nothing to propose - and the baseline's removal after).
- how many fsyncs `snapshot --all` makes (strace -f, when strace is installed; not timed).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_cli import STET, checked, git_diff
from common import PY, compile_server, fresh_dir, make_files, remove, save_json, summary
from workload import write_file

BIG_FILES = 2000
SMALL_FILES = 100


def git_repo(root: Path, files: int) -> list[tuple[Path, str, str]]:
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    made = make_files(root, files)
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "b"}
    env["GIT_COMMITTER_EMAIL"] = "b@x"
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "commit", "-qm", "base"], cwd=root, check=True, env=env)
    return made


def with_hunks(root: Path, made: list[tuple[Path, str, str]]) -> None:
    """1,000 pending hunks (10 in each of the 100 files), proposed in one patch."""
    patch = []
    for path, _, new in made:
        other = root / "proposed.tmp"
        write_file(other, new)
        rel = str(path.relative_to(root))
        _, diff = git_diff(Path(rel), other.relative_to(root), root)
        patch.append(diff.decode().replace("b/proposed.tmp", f"b/{rel}"))
        other.unlink()
    checked([*STET, "propose", "--patch", "-", "--id", "seed"], root, "".join(patch).encode())


def copy_floor(root: Path) -> float:
    """What any baseline must do: read every file, write them into one file, fsync it once."""
    names = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True, check=True).stdout
    t0 = time.perf_counter()
    with tempfile.NamedTemporaryFile(dir=root / ".git") as out:
        for name in filter(None, names.split(b"\0")):
            out.write((root / os.fsdecode(name)).read_bytes())
        out.flush()
        os.fsync(out.fileno())
    return time.perf_counter() - t0


RESIDENT = {k: v for k, v in os.environ.items() if k != "STET_RESIDENT"}  # as users run it


def run_agent(root: Path, resident: bool = False) -> tuple[float, float]:
    """`stet run -- date +%s%N`: (seconds until the agent started, seconds end to end)."""
    if not resident:
        t0 = time.time_ns()
        took, out = checked([*STET, "run", "--", "date", "+%s%N"], root)
    else:
        t0 = time.time_ns()
        p = subprocess.run([*STET, "run", "--", "date", "+%s%N"], cwd=root, capture_output=True, env=RESIDENT)
        took = (time.time_ns() - t0) / 1e9
        if p.returncode != 0:
            raise RuntimeError(f"stet run: exit {p.returncode}: {p.stderr.decode()[-500:]}")
        out = p.stdout
    started = int(out.decode().split()[-1])
    return (started - t0) / 1e9, took


def resident(root: Path, up: bool) -> None:
    """Start the workspace's resident and wait until it answers (untimed), or stop it."""
    if not up:
        subprocess.run([*STET, "resident", "--stop"], cwd=root, capture_output=True, env=RESIDENT)
        return
    subprocess.run([*STET, "status"], cwd=root, capture_output=True, env=RESIDENT, check=True)
    deadline = time.monotonic() + 60
    while subprocess.run([*STET, "resident", "--status"], cwd=root, capture_output=True, env=RESIDENT).returncode:
        if time.monotonic() > deadline:
            raise RuntimeError("the resident did not start")
        time.sleep(0.05)


def fsyncs(argv: list[str], cwd: Path) -> int | None:
    if shutil.which("strace") is None:
        return None
    with tempfile.NamedTemporaryFile("r", suffix=".strace") as log:
        p = subprocess.run(
            ["strace", "-f", "-c", "-e", "trace=fsync,fdatasync", "-o", log.name, *argv], cwd=cwd, capture_output=True
        )
        if p.returncode != 0:
            return None
        rows = [r.split() for r in log.read().splitlines()]
    return sum(int(r[3]) for r in rows if len(r) >= 5 and r[-1] in ("fsync", "fdatasync"))


def fresh_store(root: Path) -> None:
    """A store with nothing of the workspace kept yet (untimed)."""
    shutil.rmtree(root / ".stet", ignore_errors=True)
    checked([*STET, "snapshot", "--task", "warm", "src/d000/m00000.py"], root)


def main(rounds: int) -> dict:
    compile_server()
    top = fresh_dir("baseline")
    big, small = top / "big", top / "small"
    big.mkdir()
    small.mkdir()
    try:
        git_repo(big, BIG_FILES)
        with_hunks(small, git_repo(small, SMALL_FILES))
        floor, true_, snap, before, run_small, run_big, copy_big, copy_small = ([] for _ in range(8))
        before_own, run_small_own = [], []
        resident(small, True)
        for r in range(rounds + 1):
            t_pass, _ = checked([PY, "-c", "pass"], small)
            t_true, _ = checked(["true"], small)
            t_before, t_small = run_agent(small, resident=True)
            t_before_own, t_small_own = run_agent(small)
            c_small = copy_floor(small)
            fresh_store(big)
            _, t_big = run_agent(big)
            t_snap, out = checked([*STET, "snapshot", "--all", "--task", "b"], big)
            assert f"{BIG_FILES} file(s)".encode() in out, out
            c_big = copy_floor(big)
            if r == 0:
                continue  # warms the file cache
            for xs, x in zip(
                (floor, true_, snap, before, run_small, run_big, copy_big, copy_small, before_own, run_small_own),
                (t_pass, t_true, t_snap, t_before, t_small, t_big, c_big, c_small, t_before_own, t_small_own),
                strict=True,
            ):
                xs.append(x)
        resident(small, False)
        fresh_store(big)
        syncs = fsyncs([*STET, "snapshot", "--all", "--task", "b"], big)
        return {
            "python_pass": summary(floor),
            "true": summary(true_),
            "snapshot_all": summary(snap),
            "snapshot_all_fsyncs": syncs,
            "copy_big": summary(copy_big),
            "copy_small": summary(copy_small),
            "run_before_agent": summary(before),
            "run_small": summary(run_small),
            "run_before_agent_own": summary(before_own),
            "run_small_own": summary(run_small_own),
            "run_big": summary(run_big),
            "files_big": BIG_FILES,
            "files_small": SMALL_FILES,
            "bytes_big": sum(p.stat().st_size for p in (big / "src").rglob("*.py")),
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "cores": os.cpu_count(),
            "rounds": rounds,
        }
    finally:
        remove(top)


def show(d: dict) -> None:
    base = d["python_pass"]["median"]
    goal = 3 * base + d["copy_small"]["median"]
    print(f"python -c pass                                median {base:7.1f} ms")
    print(f"true                                          median {d['true']['median']:7.1f} ms")
    print(
        f"stet snapshot --all, {d['files_big']:,} files              median {d['snapshot_all']['median']:7.1f} ms"
        f"  p99 {d['snapshot_all']['p99']:7.1f} ms  goal <= 1000 ms  fsyncs {d['snapshot_all_fsyncs']}"
        f"  (copy floor {d['copy_big']['median']:.1f} ms)"
    )
    b = d["run_before_agent"]["median"]
    print(
        f"stet run, before the agent starts ({d['files_small']} files)  median {b:7.1f} ms  ratio {b / base:.2f}x"
        f"  goal <= 3x + copy ({goal:.1f} ms: copy {d['copy_small']['median']:.1f} ms)"
    )
    own = d["run_before_agent_own"]["median"]
    print(f"  the same in its own process (resident off)   median {own:7.1f} ms  ratio {own / base:.2f}x")
    print(f"stet run -- date, {d['files_small']} files, end to end     median {d['run_small']['median']:7.1f} ms")
    print(f"  the same in its own process (resident off)   median {d['run_small_own']['median']:7.1f} ms")
    print(f"stet run -- date, {d['files_big']:,} files, end to end   median {d['run_big']['median']:7.1f} ms")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--save", action="store_true")
    args = ap.parse_args()
    data = main(args.rounds)
    show(data)
    if args.save:
        save_json("baseline", data)
    sys.exit(0)
