"""`stet demo`: the one-command proof.

A temporary workspace; an agent proposes changes to three files; a scripted editor accepts
and rejects some hunks (one through its open buffer, the others on disk); the real server
is killed with SIGKILL; a new one starts and finds the very same review. Then, for good
measure, a server is made to die between committing a decision and writing the file, and
its successor finishes the job exactly once.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from pathlib import Path

from ..lsp.scripted_editor import Editor

TYPE_CHECKING = False  # types for mypy only
if TYPE_CHECKING:
    from ..domain.shapes import JSON

    Row = tuple[str, str, str, str]  # a hunk as the demo shows it: file, lines, status, feedback

FILES = {
    "app.py": ("import util\n\n\ndef main(argv):\n    name = argv[1]\n    print('hello ' + name)\n    return 0\n"),
    "util.py": (
        "def slug(text):\n"
        "    return text.lower().replace(' ', '-')\n\n\n"
        "def clamp(x, lo, hi):\n"
        "    return max(lo, min(x, hi))\n"
    ),
    "README.md": "# hello\n\nSays hello.\n\nUsage: python app.py NAME\n",
}


def _change(line: int, end_line: int, text: str) -> JSON:
    return {
        "range": {"start": {"line": line, "character": 0}, "end": {"line": end_line, "character": 0}},
        "newText": text,
    }


PROPOSAL = {
    "app.py": [
        _change(4, 6, "    name = argv[1] if len(argv) > 1 else 'world'\n    print(f'hello {name}')\n"),
        _change(6, 7, "    return 0 if name else 1\n"),
    ],
    "util.py": [
        _change(1, 2, "    return '-'.join(text.lower().split())\n"),
        _change(4, 4, "# Keep x within [lo, hi].\n"),
    ],
    "README.md": [_change(0, 1, "# hello, agent edition\n"), _change(4, 5, "Usage: python app.py [NAME]\n")],
}


def _state(hunks: list[JSON], root: Path) -> dict[str, Row]:
    out: dict[str, Row] = {}
    for h in hunks:
        name = Path(h["uri"].removeprefix("file://")).name
        r = h["range"]
        out[h["id"]] = (
            name,
            f"{r['start']['line'] + 1}-{max(r['start']['line'] + 1, r['end']['line'])}",
            h["status"],
            h["feedback"] or "",
        )
    return out


def _table(before: dict[str, Row], after: dict[str, Row]) -> str:
    rows = [("hunk", "file", "lines", "before kill -9", "after restart", "")]
    for hid in before:
        b, a = before[hid], after.get(hid)
        same = a is not None and a == b
        rows.append(
            (
                hid,
                b[0],
                b[1],
                b[2] + (f" ({b[3]})" if b[3] else ""),
                (a[2] if a else "MISSING"),
                "same" if same else "DIFFERENT",
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def say(text: str = "") -> None:
    print(text, flush=True)


async def _demo(root: Path) -> int:
    ok, editor, after = await _crash_and_restore(root)
    applied_once = await _die_before_writing(root, editor, after)
    say(
        "\nStet kept the review through two crashes."
        if ok and applied_once
        else "\nSomething was lost: this is a bug, please report it."
    )
    return 0 if ok and applied_once else 1


async def _crash_and_restore(root: Path) -> tuple[bool, Editor, dict[str, Row]]:
    """Act one: propose, decide, kill -9, restart: the same review. Says whether it was."""
    for name, text in FILES.items():
        (root / name).write_text(text)
    say(f"Workspace: {root}\n")

    editor = Editor(root)
    restored = await editor.start()
    say(f"1. Server started (pid {editor.pid}); restored an empty review in {restored['durationMs']} ms.")
    app = editor.open("app.py")
    changes = {(root / n).as_uri(): edits for n, edits in PROPOSAL.items()}
    res = await editor.request(
        "stet/propose",
        {"proposalId": "demo-1", "edit": {"changes": changes}, "agent": "demo-agent", "message": "friendlier greeting"},
    )
    hunks = res["hunks"]
    say(f"2. The agent proposed {len(hunks)} hunks over {len(PROPOSAL)} files (app.py is open in the editor).")
    by_file: dict[str, list[str]] = {}
    for h in hunks:
        by_file.setdefault(Path(h["uri"]).name, []).append(h["id"])

    accepted = by_file["app.py"][:1] + by_file["util.py"]
    await editor.command("stet.accept", {"hunkIds": by_file["app.py"][:1]})
    await editor.command("stet.accept", {"hunkIds": by_file["util.py"]})
    await editor.command("stet.reject", {"hunkIds": by_file["README.md"][:1], "feedback": "keep the title short"})
    listed = (await editor.request("stet/listHunks", {}))["hunks"]
    tally = {s: sum(1 for h in listed if h["status"] == s) for s in ("applied", "rejected", "pending")}
    on_disk = len(by_file["util.py"])
    say(
        f"3. The developer accepted {len(accepted)} hunks (1 into the open buffer, {on_disk} on disk: "
        f"{tally['applied']} applied), rejected {tally['rejected']} with feedback,"
    )
    say(f"   and left {tally['pending']} pending. app.py's buffer is not saved.")
    before = _state(listed, root)
    buffer_before = editor.docs[app][0]

    pid = editor.pid
    await editor.kill()
    say(f"4. kill -9 {pid}: the server is gone.")

    editor2 = Editor(root)
    editor2.docs = editor.docs  # the editor window survived, with its buffer
    restored = await editor2.start()
    say(
        f"5. A new server (pid {editor2.pid}) restored the review in {restored['durationMs']} ms: {restored['counts']}\n"
    )
    after = _state((await editor2.request("stet/listHunks", {}))["hunks"], root)
    say(_table(before, after))
    ok = before == after
    util_text = (root / "util.py").read_text()
    once = util_text.count("'-'.join(text.lower().split())") == 1 and util_text.count("# Keep x within") == 1
    buffer_ok = editor2.docs[app][0] == buffer_before and buffer_before.count("if len(argv) > 1") == 1
    say("")
    say(f"   Same review state after the crash: {'yes' if ok else 'NO'}")
    say(f"   Each accepted hunk in its file exactly once: {'yes' if once and buffer_ok else 'NO'}")
    await editor2.stop()
    return ok and once and buffer_ok, editor, after


async def _die_before_writing(root: Path, editor: Editor, after: dict[str, Row]) -> bool:
    """Act two: die between the durable decision and the file write; the successor finishes."""
    say("\n6. Now a server that dies at the worst moment: after committing an accept, before writing the file.")
    dying = Editor(root, env={"STET_FAULT": "effect:before-write"})
    dying.docs = editor.docs
    await dying.start()
    pending = [hid for hid, v in after.items() if v[2] == "pending" and v[0] == "README.md"]
    try:
        await dying.command("stet.accept", {"hunkIds": pending})
        say("   (the server did not die?)")
    except Exception:
        code = await dying.process.wait()
        say(f"   The accept was committed, then the server died (exit {code}) before touching README.md.")
    await dying.drop()
    final = Editor(root)
    final.docs = editor.docs
    await final.start()
    state = _state((await final.request("stet/listHunks", {}))["hunks"], root)
    readme = (root / "README.md").read_text()
    applied_once = readme.count("Usage: python app.py [NAME]") == 1 and "Usage: python app.py NAME\n" not in readme
    say(
        f"7. Its successor finished the job at start: hunk {pending[0]} is {state[pending[0]][2]}; "
        f"README.md has the change exactly once: {'yes' if applied_once else 'NO'}."
    )
    await final.stop()
    return applied_once and state[pending[0]][2] == "applied"


def run_demo(keep: bool = False) -> int:
    root = Path(tempfile.mkdtemp(prefix="stet-demo-")).resolve()
    try:
        return asyncio.run(_demo(root))
    finally:
        if keep:
            print(f"(workspace kept: {root})")
        else:
            shutil.rmtree(root, ignore_errors=True)
