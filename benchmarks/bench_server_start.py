"""Where the editor's server spends its start: spawn to `stet/restored` on an empty
store, against the imports it cannot do without, each a fresh interpreter, interleaved, medians:

- `python -c pass`;
- `import lsprotocol.types` (pygls imports it whole: `pygls.lsp.server` needs its classes);
- `import pygls.lsp.server`;
- `import stet.lsp.serve` (everything `stet serve` loads before it reads a byte);
- `stet serve` from spawn to `stet/restored` on an empty store.

What is left after the imports is the server's own start (open the store, recover, publish)."""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import time

from common import PY, compile_server, fresh_dir, remove, save_json, start_stet, summary

IMPORTS = {
    "python -c pass": "pass",
    "import lsprotocol.types": "import lsprotocol.types",
    "import pygls.lsp.server": "import pygls.lsp.server",
    "import stet.lsp.serve": "import stet.lsp.serve",
}


def fresh(code: str) -> float:
    t0 = time.perf_counter()
    subprocess.run([PY, "-c", code], check=True)
    return time.perf_counter() - t0


async def restored_once() -> float:
    root = fresh_dir("start")
    try:
        server, _, took = await start_stet(root)
        await server.stop()
        return took
    finally:
        remove(root)


def main(rounds: int) -> dict:
    compile_server()
    samples: dict[str, list[float]] = {k: [] for k in [*IMPORTS, "stet serve to stet/restored (empty store)"]}
    for r in range(rounds + 1):
        got = {name: fresh(code) for name, code in IMPORTS.items()}
        got["stet serve to stet/restored (empty store)"] = asyncio.run(restored_once())
        if r == 0:
            continue  # warm the file cache
        for k, v in got.items():
            samples[k].append(v)
    out = {k: summary(v) for k, v in samples.items()}
    for k, s in out.items():
        print(f"{k:<45} median {s['median']:7.1f} ms  p99 {s['p99']:7.1f} ms")
    return out


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--save", action="store_true")
    args = ap.parse_args()
    data = main(args.rounds)
    if args.save:
        save_json("server_start", data)
