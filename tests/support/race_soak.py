"""The race soak: a hostile agent flips a folder of the workspace between the real folder and a
symlink to an outside copy of it, as fast as a thread can, while every kind of hunk of the
files in it is accepted, one accept at a time, against a real `stet serve` - for as long as
you like. It counts the writes that escaped the workspace (anything that changed in the
outside copy), and the hunks answered `applied` that are not in the workspace (or answered
otherwise and carried out anyway). Both must be 0.

    python tests/support/race_soak.py --seconds 600        # the 10-minute soak of docs/RELIABILITY.md
    python tests/support/race_soak.py --seconds 30 -v      # a quick look
    python tests/support/race_soak.py --two-step           # flips of two renames, not one exchange

With --two-step the folder's name is free for a moment at each flip: a delete or rename
carried out in that moment finds no file and no folder there, so it is done as far as Stet
can see (the same answer as after a crash that had done it); when the flipper then puts the
folder back, the file is back too. Those count under "answers_not_matching_the_files", apart
from the writes outside, which must be 0 either way.

Each batch: a file of 40 lines whose 20 one-line edits are proposed, 4 files to create, 4 to
delete and 4 to rename, all in the flipped folder, and the same file names (with the same
content) in the outside copy as bait; the flipper runs while the 32 hunks are accepted; then
it stops (the real folder back in place) and everything is checked.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, for `support`

from support.flipper import Flipper, fingerprint  # noqa: E402
from support.harness import rng, write  # noqa: E402
from support.rawlsp import RawServer  # noqa: E402


class Soak:
    def __init__(self, root: Path, verbose: bool = False, two_step: bool = False):
        self.two_step = two_step
        self.atomic = None
        self.ws = root / "ws"
        self.sub = self.ws / "sub"
        self.out = root / "outside" / "copy"
        self.verbose = verbose
        self.counts = {"batches": 0, "accepts": 0, "applied": 0, "stale": 0, "refused": 0, "flips": 0}
        self.escapes: list[str] = []
        self.mismatches: list[str] = []
        self.sub.mkdir(parents=True)
        self.out.mkdir(parents=True)
        write(self.ws / "README", "the workspace\n")

    def batch(self, s: RawServer, k: int) -> None:
        f = f"f{k}.txt"
        names = {
            "edit": [f],
            "create": [f"c{k}_{i}.txt" for i in range(4)],
            "delete": [f"d{k}_{i}.txt" for i in range(4)],
            "rename": [f"r{k}_{i}.txt" for i in range(4)],
        }
        text = "".join(f"line {i}\n" for i in range(40))
        for folder in (self.sub, self.out):  # the bait outside has the same names and content
            write(folder / f, text)
            for name in names["delete"] + names["rename"]:
                write(folder / name, f"{name}\n")
        before = fingerprint(self.out.parent)
        uri = lambda name: (self.sub / name).as_uri()  # noqa: E731
        changes = [
            {
                "textDocument": {"uri": uri(f), "version": None},
                "edits": [{"range": rng(i, 0, i + 1, 0), "newText": f"NEW {k} {i}\n"} for i in range(0, 40, 2)],
            },
            *({"kind": "create", "uri": uri(n)} for n in names["create"]),
            *({"kind": "delete", "uri": uri(n)} for n in names["delete"]),
            *({"kind": "rename", "oldUri": uri(n), "newUri": uri(n + ".moved")} for n in names["rename"]),
        ]
        hunks = s.call("stet/propose", {"proposalId": f"batch{k}", "edit": {"documentChanges": changes}})["hunks"]
        flipper = Flipper(self.sub, self.out, pause=0.002, two_step=self.two_step)
        flipper.start()
        answers = {}
        try:
            for h in hunks:
                answers[h["id"]] = s.request(
                    "workspace/executeCommand",
                    {"command": "stet.accept", "arguments": [{"hunkIds": [h["id"]]}]},
                    timeout=60,
                )
        finally:
            flipper.stop()
        self.counts["batches"] += 1
        self.counts["flips"] += flipper.flips
        self.atomic = flipper.atomic
        if fingerprint(self.out.parent) != before:
            self.escapes.append(f"batch {k}: the outside copy changed")
            for folder in (self.out,):  # start the next batch from clean bait
                shutil.rmtree(folder)
                folder.mkdir()
        text_now = (self.sub / f).read_text() if (self.sub / f).exists() else ""
        for h in hunks:
            answer = answers[h["id"]]
            self.counts["accepts"] += 1
            if "error" in answer:
                if answer["error"]["code"] != -32002:  # refused: became stale meanwhile
                    self.mismatches.append(f"batch {k}: {h['kind']} answered {answer['error']}")
                state = "refused"
            else:
                state = answer["result"]["hunks"][0]["status"]
            self.counts[state if state in self.counts else "stale"] += 1
            name = h["uri"].rsplit("/", 1)[1]
            if h["kind"] == "edit":
                done = h["newText"] in text_now
            elif h["kind"] == "create":
                done = (self.sub / name).exists()
            elif h["kind"] == "delete":
                done = not (self.sub / name).exists()
            else:
                done = (self.sub / (name + ".moved")).exists() and not (self.sub / name).exists()
            if (state == "applied") != done:
                self.mismatches.append(f"batch {k}: {h['kind']} {name} answered {state}, carried out: {done}")
        if self.verbose:
            print(f"batch {k}: {self.line()}", file=sys.stderr)

    def line(self) -> str:
        c = self.counts
        return (
            f"batches={c['batches']} accepts={c['accepts']} (applied {c['applied']}, stale {c['stale']}, "
            f"refused {c['refused']}) flips={c['flips']} ({'atomic exchanges' if self.atomic else 'two renames each'}) "
            f"writes_outside={len(self.escapes)} "
            f"answers_not_matching_the_files={len(self.mismatches)}"
        )


def soak(seconds: float, verbose: bool = False, two_step: bool = False) -> Soak:
    tmp = Path(tempfile.mkdtemp(prefix="stet-race-soak-"))
    run = Soak(tmp, verbose, two_step)
    deadline = time.monotonic() + seconds
    k = 0
    try:
        while time.monotonic() < deadline:
            s = RawServer(run.ws)  # a fresh server now and then: the sweep and recovery meet the aftermath
            try:
                s.initialize()
                for _ in range(20):
                    if time.monotonic() >= deadline:
                        break
                    run.batch(s, k)
                    k += 1
            finally:
                s.kill()
    finally:
        if not run.escapes and not run.mismatches:
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            print(f"kept for a look: {tmp}", file=sys.stderr)
    return run


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=600)
    ap.add_argument("--verbose", "-v", action="store_true")
    ap.add_argument(
        "--two-step",
        action="store_true",
        help="flip with two renames (the name is free for a moment) instead of one atomic exchange",
    )
    args = ap.parse_args(argv)
    started = time.monotonic()
    run = soak(args.seconds, args.verbose, args.two_step)
    print(run.line())
    print(f"seconds: {time.monotonic() - started:.0f}")
    for problem in run.escapes + run.mismatches:
        print("PROBLEM", problem)
    return 1 if run.escapes or run.mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
