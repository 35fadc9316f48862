"""Benchmark 9: the command line's wall time, process start to exit, against floors measured in
the same run, interleaved: `python -c pass` in the same interpreter (the least any Python
command costs), and for `stet propose` of a big diff `git diff --no-index` of the same two files
plus `python -c pass`. Stet runs as users run it: the `stet` script pip installed in the
venv, its modules byte-compiled (common.compile_server), each command in its own process
(STET_RESIDENT=off: the path before the resident; bench_instant.py times both).

- `stet status`, `stet status --json` and `stet accept ID` (then `stet undo ID`, not timed) on a store with 1,000
  pending hunks in 100 files;
- `stet propose --patch` of one 50,000-line file with 500 scattered changes (each run in a fresh
  store, so it is never a replay);
- which heavy packages each command imports (`python -X importtime`): status and accept need
  neither the language server (pygls, lsprotocol) nor MCP nor watchdog.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

from common import PY, compile_server, fresh_dir, make_files, remove, save_json, summary
from workload import code_lines, scatter_changes, write_file

_SCRIPT = Path(PY).parent / "stet"  # what `pip install` put on the PATH
STET = [str(_SCRIPT)] if _SCRIPT.exists() else [PY, "-m", "stet"]
HEAVY = ("pygls", "lsprotocol", "cattrs", "mcp", "watchdog", "pydantic", "starlette", "uvicorn", "anyio")


# Each command in its own process, as before the resident (benchmark 14, bench_instant.py, times both).
OWN = {**os.environ, "STET_RESIDENT": "off"}


def run(argv: list[str], cwd: Path, stdin: bytes | None = None) -> tuple[float, subprocess.CompletedProcess]:
    t0 = time.perf_counter()
    p = subprocess.run(argv, cwd=cwd, input=stdin, capture_output=True, env=OWN)
    return time.perf_counter() - t0, p


def checked(argv: list[str], cwd: Path, stdin: bytes | None = None) -> tuple[float, bytes]:
    took, p = run(argv, cwd, stdin)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: exit {p.returncode}: {p.stderr.decode()[-500:]}")
    return took, p.stdout


def heavy_imports(argv: list[str], cwd: Path, stdin: bytes | None = None) -> list[str]:
    """The heavy top-level packages a command imports."""
    script = argv[1:] if argv[0] == PY else argv
    p = subprocess.run([PY, "-X", "importtime", *script], cwd=cwd, input=stdin, capture_output=True, env=OWN)
    seen = set()
    for row in p.stderr.decode(errors="replace").splitlines():
        if row.startswith("import time:") and "|" in row:
            name = row.rsplit("|", 1)[1].strip()
            top = name.split(".")[0]
            if top in HEAVY:
                seen.add(top)
    return sorted(seen)


def git_diff(a: Path, b: Path, cwd: Path) -> tuple[float, bytes]:
    took, p = run(["git", "diff", "--no-index", "--no-color", str(a), str(b)], cwd)
    assert p.returncode == 1, p.stderr  # 1: the files differ
    return took, p.stdout


def status_and_accept(rounds: int) -> dict:
    root = fresh_dir("cli")
    try:
        subprocess.run(["git", "init", "-q"], cwd=root, check=True)
        files = make_files(root, 100)
        for path, base, new in files:
            a = root / "a.tmp"
            write_file(a, new)
            _, diff = git_diff(path.relative_to(root), a.relative_to(root), root)
            # the diff names a.tmp as the new side: point it at the file itself
            rel = str(path.relative_to(root))
            text = diff.decode().replace("b/a.tmp", f"b/{rel}")
            checked(STET + ["propose", "--patch", "-", "--id", f"p-{rel}"], root, text.encode())
            a.unlink()
        ids = [
            row.split()[0]
            for row in checked(STET + ["status"], root)[1].decode().splitlines()
            if row.strip().startswith("h")
        ]
        assert len(ids) >= rounds, len(ids)
        floor, status, status_json, accept = [], [], [], []
        for r in range(rounds + 2):
            t_floor, _ = checked([PY, "-c", "pass"], root)
            t_status, _ = checked(STET + ["status"], root)
            t_json, _ = checked(STET + ["status", "--json"], root)
            t_accept, out = checked(STET + ["accept", ids[r]], root)
            assert b"applied" in out, out
            checked(STET + ["undo", ids[r]], root)
            if r < 2:
                continue  # warm the file cache
            floor.append(t_floor)
            status.append(t_status)
            status_json.append(t_json)
            accept.append(t_accept)
        return {
            "python_pass": summary(floor),
            "status": summary(status),
            "status_json": summary(status_json),
            "accept": summary(accept),
            "status_imports": heavy_imports(STET + ["status"], root),
            "status_json_imports": heavy_imports(STET + ["status", "--json"], root),
            "accept_imports": heavy_imports(STET + ["accept", ids[0]], root),
        }
    finally:
        remove(root)


def propose_big(rounds: int) -> dict:
    root = fresh_dir("cli-propose")
    try:
        rnd = random.Random(5)
        base = code_lines(50_000, rnd, tag="big")[:50_000]
        new = scatter_changes(base, 500, rnd, tag="agent")
        a, b = root / "old" / "big.py", root / "new" / "big.py"
        write_file(a, "".join(base))
        write_file(b, "".join(new))
        work = root / "ws"
        write_file(work / "big.py", "".join(base))
        floor, propose, diff_only = [], [], []
        for r in range(rounds + 1):
            t_diff, diff = git_diff(Path("old/big.py"), Path("new/big.py"), root)
            t_pass, _ = checked([PY, "-c", "pass"], root)
            text = diff.decode().replace("a/old/big.py", "a/big.py").replace("b/new/big.py", "b/big.py")
            shutil.rmtree(work / ".stet", ignore_errors=True)
            t_propose, out = checked(STET + ["propose", "--patch", "-", "--root", str(work)], work, text.encode())
            assert b"500 hunk(s)" in out, out[:200]
            if r == 0:
                continue
            floor.append(t_diff + t_pass)
            diff_only.append(t_diff)
            propose.append(t_propose)
        shutil.rmtree(work / ".stet", ignore_errors=True)
        imports = heavy_imports(STET + ["propose", "--patch", "-", "--root", str(work)], work, text.encode())
        return {
            "floor": summary(floor),
            "git_diff": summary(diff_only),
            "propose": summary(propose),
            "propose_imports": imports,
        }
    finally:
        remove(root)


def main(rounds: int) -> dict:
    compile_server()
    env_note = {"python": sys.version.split()[0], "cwd_venv": os.path.dirname(PY), "stet": " ".join(STET)}
    sa = status_and_accept(rounds)
    pb = propose_big(max(3, rounds // 3))
    out = {**sa, "propose_big": pb, "env": env_note}
    floor = sa["python_pass"]["median"]
    print(f"python -c pass                      median {floor:7.1f} ms")
    for name in ("status", "status_json", "accept"):
        s = sa[name]
        imports = sa[f"{name}_imports"]
        label = name.replace("_json", " --json")
        print(
            f"stet {label:<29} median {s['median']:7.1f} ms  p99 {s['p99']:7.1f} ms  ratio {s['median'] / floor:.2f}x"
            f"  heavy imports: {', '.join(imports) or 'none'}"
        )
    print(
        f"stet propose (50,000 lines, 500)   median {pb['propose']['median']:7.1f} ms  "
        f"floor (git diff --no-index + python -c pass) {pb['floor']['median']:.1f} ms  "
        f"ratio {pb['propose']['median'] / pb['floor']['median']:.2f}x"
        f"  heavy imports: {', '.join(pb['propose_imports']) or 'none'}"
    )
    return out


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--save", action="store_true")
    args = ap.parse_args()
    data = main(args.rounds)
    if args.save:
        save_json("cli", data)
