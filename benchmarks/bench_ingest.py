"""Benchmark 3: proposal ingest, and the diff engines considered for it.

End to end: `stet/propose` of a 50,000-line file with 500 scattered changes (the agent
sends the whole new text as one TextEdit; the file is on disk, not open), answered once the
hunks are committed, against `git diff --no-index -U0` of the same pair of files (a whole
process: start, read both files, diff, print), measured alternately in the same run.

Engines, in process, on the same pairs: time, hunk count, and whether the hunks are exactly
git's (its default Myers diff), on the large pair and on a set of typical small edits.
"""

from __future__ import annotations

import argparse
import asyncio
import difflib
import random
import re
import subprocess
import time
from pathlib import Path

from common import fresh_dir, full_replace, line, remove, save_json, start_stet, summary
from stet.domain import hunks as stet_hunks
from workload import code_lines, file_uri, scatter_changes, write_file


# --- engines: each returns (a_start, a_end, b_start, b_end) of maximal changed runs -------
def _merge(ops):
    regions = []
    for i1, i2, j1, j2 in ops:
        if regions and regions[-1][1] == i1 and regions[-1][3] == j1:
            regions[-1] = (regions[-1][0], i2, regions[-1][2], j2)
        else:
            regions.append((i1, i2, j1, j2))
    return regions


def _opcodes(opcodes):
    return _merge([(i1, i2, j1, j2) for tag, i1, i2, j1, j2 in opcodes if tag != "equal"])


def _trimmed(engine):
    """The common prefix and suffix cut first, as Stet's previous engine did, for every engine."""

    def run(a, b):
        pre, limit = 0, min(len(a), len(b))
        while pre < limit and a[pre] == b[pre]:
            pre += 1
        suf = 0
        while suf < limit - pre and a[len(a) - 1 - suf] == b[len(b) - 1 - suf]:
            suf += 1
        regions = engine(a[pre : len(a) - suf], b[pre : len(b) - suf])
        return [(i1 + pre, i2 + pre, j1 + pre, j2 + pre) for i1, i2, j1, j2 in regions]

    return run


def e_difflib(a, b):
    return _opcodes(difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes())


def e_cydifflib(a, b):
    import cydifflib

    return _opcodes(cydifflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes())


def e_patiencediff(a, b):
    import patiencediff

    return _opcodes(patiencediff.PatienceSequenceMatcher(None, a, b).get_opcodes())


def e_rapidfuzz(a, b):
    from rapidfuzz.distance import Indel

    return _merge([(o.src_start, o.src_end, o.dest_start, o.dest_end) for o in Indel.opcodes(a, b) if o.tag != "equal"])


def _as_chars(a, b):
    """Line mode for character differs: each distinct line becomes one character."""
    ids: dict[str, str] = {}

    def enc(seq):
        out = []
        for s in seq:
            c = ids.get(s)
            if c is None:
                n = len(ids) + 1
                c = chr(n + 0x800 if n >= 0xD800 else n)
                ids[s] = c
            out.append(c)
        return "".join(out)

    return enc(a), enc(b)


def _from_runs(ops):
    i = j = 0
    out = []
    for op, n in ops:
        if op == "=":
            i, j = i + n, j + n
        elif op == "-":
            out.append((i, i + n, j, j))
            i += n
        else:
            out.append((i, i, j, j + n))
            j += n
    return _merge(out)


def e_fast_dmp(a, b):
    import fast_diff_match_patch as fdmp

    sa, sb = _as_chars(a, b)
    return _from_runs(fdmp.diff(sa, sb, timelimit=0, checklines=False, cleanup="No"))


def e_dmp(a, b):
    from diff_match_patch import diff_match_patch

    d = diff_match_patch()
    d.Diff_Timeout = 0
    sa, sb = _as_chars(a, b)
    return _from_runs([({0: "=", -1: "-", 1: "+"}[op], len(t)) for op, t in d.diff_main(sa, sb, False)])


def e_pygit2(a, b):
    import pygit2

    patch = pygit2.Patch.create_from("".join(a), "".join(b), context_lines=0)
    out = []
    for h in patch.hunks:
        i1 = h.old_start - 1 if h.old_lines else h.old_start
        j1 = h.new_start - 1 if h.new_lines else h.new_start
        out.append((i1, i1 + h.old_lines, j1, j1 + h.new_lines))
    return _merge(out)


ENGINES = [
    ("stet: patience-anchored (pure Python, now)", stet_hunks.changed_regions, "stdlib only"),
    ("difflib SequenceMatcher (before)", _trimmed(e_difflib), "stdlib"),
    ("cydifflib", _trimmed(e_cydifflib), "compiled difflib"),
    ("patiencediff", _trimmed(e_patiencediff), "compiled; GPL-2.0-or-later"),
    ("rapidfuzz Indel.opcodes", _trimmed(e_rapidfuzz), "compiled; MIT"),
    ("diff-match-patch (line mode)", _trimmed(e_dmp), "pure Python; Apache-2.0"),
    ("fast-diff-match-patch (line mode)", _trimmed(e_fast_dmp), "compiled C++; Apache-2.0"),
    ("pygit2 (libgit2 xdiff)", e_pygit2, "compiled; GPL-2.0 with linking exception"),
]

_HUNK = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", re.M)


def git_diff(pa: Path, pb: Path) -> bytes:
    return subprocess.run(
        ["git", "diff", "--no-index", "--no-color", "--no-ext-diff", "-U0", "--diff-algorithm=myers", str(pa), str(pb)],
        capture_output=True,
    ).stdout


def git_regions(pa: Path, pb: Path) -> list[tuple[int, int, int, int]]:
    regions = []
    for m in _HUNK.finditer(git_diff(pa, pb)):
        s1, n1, s2, n2 = int(m[1]), int(m[2] or 1), int(m[3]), int(m[4] or 1)
        i1 = s1 - 1 if n1 else s1
        j1 = s2 - 1 if n2 else s2
        regions.append((i1, i1 + n1, j1, j1 + n2))
    return _merge(regions)


# --- typical small edits (hunk quality) ---------------------------------------------------
def typical_cases(rnd: random.Random) -> list[tuple[str, list[str], list[str]]]:
    base = code_lines(400, rnd, tag="t")
    cases = []
    b = list(base)
    b[120:120] = ["def helper(value):\n", '    """New."""\n', "    return value\n", "\n", "\n"]
    cases.append(("add a function", base, b))
    b = list(base)
    del b[200:214]
    cases.append(("delete a block", base, b))
    b = list(base)
    k = next(i for i in range(50, 400) if base[i] == "\n")
    b[k - 1] = "    changed = True\n"
    cases.append(("change a line next to a blank line", base, b))
    b = ["import os\n", *base]
    cases.append(("insert an import at the top", base, b))
    b = [ln.replace("value", "amount") for ln in base]
    cases.append(("rename a variable everywhere", base, b))
    b = list(base)
    b[60:80] = ["    " + ln if ln.strip() else ln for ln in base[60:80]]
    cases.append(("re-indent a block", base, b))
    b = list(base)
    block = b[300:320]
    del b[300:320]
    b[40:40] = block
    cases.append(("move a block up", base, b))
    b = list(base)
    for k in range(10, 390, 37):
        b[k] = b[k].rstrip("\n") + "  # noqa\n"
    cases.append(("annotate scattered lines", base, b))
    return cases


def time_engine(fn, a, b, repeat: int) -> tuple[float, list]:
    times = []
    out = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn(a, b)
        times.append(time.perf_counter() - t0)
    return sorted(times)[len(times) // 2], out


def compare_engines(root: Path, big: tuple[list[str], list[str]], slow: bool) -> list[dict]:
    rnd = random.Random(11)
    mid_a = code_lines(5_000, rnd, tag="mid")
    mid_b = scatter_changes(mid_a, 50, rnd)
    pairs = {"5k": (mid_a, mid_b), "50k": big}
    git_of = {}
    for name, (a, b) in pairs.items():
        pa, pb = root / f"{name}-a.txt", root / f"{name}-b.txt"
        write_file(pa, "".join(a))
        write_file(pb, "".join(b))
        git_of[name] = git_regions(pa, pb)
    cases = typical_cases(rnd)
    case_git = []
    for k, (title, a, b) in enumerate(cases):
        pa, pb = root / f"case{k}-a.txt", root / f"case{k}-b.txt"
        write_file(pa, "".join(a))
        write_file(pb, "".join(b))
        case_git.append(git_regions(pa, pb))
    rows = []
    for label, fn, note in ENGINES:
        row = {"engine": label, "note": note}
        try:
            for name, (a, b) in pairs.items():
                if name == "50k" and label.startswith(("difflib", "cydifflib")) and not slow:
                    row[name] = None  # minutes: see --slow
                    continue
                if name == "50k" and label.startswith("diff-match-patch") and not slow:
                    row[name] = None
                    continue
                repeat = 1 if label.startswith(("difflib", "cydifflib", "diff-match")) else 5
                t, regions = time_engine(fn, a, b, repeat)
                row[name] = {
                    "ms": t * 1000,
                    "hunks": len(regions),
                    "git_hunks": len(git_of[name]),
                    "same_as_git": len(set(regions) & set(git_of[name])),
                }
            same = 0
            for (title, a, b), g in zip(cases, case_git):
                same += fn(a, b) == g
            row["typical_same_as_git"] = same
            row["typical_cases"] = len(cases)
        except ImportError as exc:
            row["error"] = f"not installed ({exc.name})"
        rows.append(row)
        print(f"  {label:44} {row}")
    return rows, [title for title, _, _ in cases]


async def end_to_end(root: Path, a: list[str], b: list[str], rounds: int) -> dict:
    base_text, new_text = "".join(a), "".join(b)
    new_path = root / "proposed.py"
    write_file(new_path, new_text)
    paths = []
    for k in range(rounds + 2):
        p = root / "src" / f"big{k:02d}.py"
        write_file(p, base_text)
        paths.append(p)
    server, _, _ = await start_stet(root, root / "server.log")
    stet_t, git_t, edits_t = [], [], []
    try:
        for k, p in enumerate(paths):
            t0 = time.perf_counter()
            out = git_diff(p, new_path)
            t_git = time.perf_counter() - t0
            assert out
            edit = {"changes": {file_uri(p): full_replace(base_text, new_text)}}
            res, t_stet = await server.timed_request("stet/propose", {"proposalId": f"big{k}", "edit": edit})
            assert len(res["hunks"]) == 500, len(res["hunks"])
            if k >= 2:
                stet_t.append(t_stet)
                git_t.append(t_git)
        # The same proposal sent as 500 separate TextEdits (one per changed run).
        regions = stet_hunks.changed_regions(a, b)
        text_edits = [
            {
                "range": {"start": {"line": i1, "character": 0}, "end": {"line": i2, "character": 0}},
                "newText": "".join(b[j1:j2]),
            }
            for i1, i2, j1, j2 in regions
        ]
        for k in range(min(rounds, 5)):
            p = root / "src" / f"edits{k:02d}.py"
            write_file(p, base_text)
            res, t = await server.timed_request(
                "stet/propose", {"proposalId": f"edits{k}", "edit": {"changes": {file_uri(p): text_edits}}}
            )
            assert len(res["hunks"]) == 500
            edits_t.append(t)
    finally:
        await server.stop()
    return {"propose": summary(stet_t), "git": summary(git_t), "propose_as_edits": summary(edits_t)}


async def main(rounds: int, slow: bool) -> dict:
    root = fresh_dir("ingest")
    try:
        rnd = random.Random(3)
        a = code_lines(50_000, rnd, tag="big")
        b = scatter_changes(a, 500, rnd)
        e2e = await end_to_end(root, a, b, rounds)
        print("Proposal ingest: 50,000 lines, 500 scattered changes")
        print(line("stet/propose (whole new text)", e2e["propose"], e2e["git"]))
        print(line("stet/propose (500 TextEdits)", e2e["propose_as_edits"], e2e["git"]))
        print(line("floor: git diff --no-index -U0", e2e["git"]))
        print("Diff engines:")
        engines, case_titles = compare_engines(root, (a, b), slow)
        return {"end_to_end": e2e, "engines": engines, "typical_cases": case_titles, "slow": slow}
    finally:
        remove(root)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--slow", action="store_true", help="also time the quadratic engines on 50,000 lines (minutes)")
    ap.add_argument("--save", action="store_true")
    args = ap.parse_args()
    data = asyncio.run(main(args.rounds, args.slow))
    if args.save:
        save_json("ingest", data)
