"""What writing a file safely costs: Stet's `safe.write_file` / `safe.read_file`
against a floor that does the same durable work by path, following symlinks - a temp file,
fsync, rename, fsync of the folder (what Stet did before) and a plain `open().read()`.

Stet's write also walks to the folder from "/" without following symlinks, keeps the file's
owner, group, mode and extended attributes, and checks the folder and the file again before
the rename; its read walks the same way and refuses anything but a regular file.

    python benchmarks/bench_writes.py                # 400 rounds, a 10 KB file 6 folders deep
    python benchmarks/bench_writes.py --rounds 1000 --size 100000

Prints medians (microseconds) and the ratio to the floor, measured alternately in one run.
"""

from __future__ import annotations

import argparse
import os
import secrets
import stat
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))

from stet.workspace import safe  # noqa: E402


def floor_write(path: str, data: bytes) -> None:
    folder = os.path.dirname(path)
    mode = stat.S_IMODE(os.stat(path).st_mode)
    tmp = os.path.join(folder, f".{os.path.basename(path)}.tmp-{secrets.token_hex(4)}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    dir_fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def floor_read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def median(xs: list[float]) -> float:
    xs = sorted(xs)
    return xs[len(xs) // 2]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=400)
    ap.add_argument("--size", type=int, default=10_000)
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="stet-bench-writes-")).resolve()
    folder = root / "a" / "b" / "c" / "d" / "e" / "f"
    folder.mkdir(parents=True)
    path = str(folder / "file.txt")
    Path(path).write_bytes(b"x" * args.size)
    os.setxattr(path, "user.tag", b"kept") if hasattr(os, "setxattr") else None
    times: dict[str, list[float]] = {"floor write": [], "stet write": [], "floor read": [], "stet read": []}
    for i in range(args.rounds):
        data = (b"%d " % i) * (args.size // 4)
        for name, fn in (
            ("floor write", lambda: floor_write(path, data)),
            ("stet write", lambda: safe.write_file(path, data)),
            ("floor read", lambda: floor_read(path)),
            ("stet read", lambda: safe.read_file(path)),
        ):
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    m = {k: median(v) * 1e6 for k, v in times.items()}
    print(f"{args.rounds} rounds, {args.size} bytes, {len(folder.parts) - 1} folders deep")
    for what in ("write", "read"):
        f, s = m[f"floor {what}"], m[f"stet {what}"]
        print(f"{what}: stet {s:.0f} us, floor {f:.0f} us, ratio {s / f:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
