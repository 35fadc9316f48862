"""Terminal injection through what an agent wrote.

A proposal id, a message, a task's title, goal, steps and notes, an agent's name, the developer's
feedback, a hunk's new text, a path in a patch dropped into the inbox: each carries ESC[2K (erase
the line), OSC 52 (set the clipboard), BEL, BS, CR, DEL, a C1 CSI, newlines that would forge a row
and U+202E (right-to-left override). Through every human-readable command, no raw control reaches
stdout or stderr, no row is forged, and the text is still there to read, its controls escaped
(domain/inert.py). `--json` stays exact; on a terminal Stet's own colours still work.
"""

from __future__ import annotations

import json
import os
import pty
import re
import signal
import subprocess
import sys
import time
import unicodedata

import pytest

from support.clitools import STET, commit_all, make_repo, stet, stet_json

H = "ok\x1b[2K\x1b]52;c;cHduZWQ=\x07\x08\r\n## forged row\u202egnp.exe\x9b31m\x7fend"
BODY = "TWO \x1b[2K\x1b]52;c;QQ==\x07 x\u202e y\tz\n\x1b[1A\x1b[2Kforged\n"
UNSAFE = ("Cc", "Cf", "Zl", "Zp", "Cs")


def raw(text: str) -> list[str]:
    """The unsafe characters printed raw (a newline ends a row; a tab is only whitespace)."""
    return sorted({f"U+{ord(c):04X}" for c in text if c not in "\n\t" and unicodedata.category(c) in UNSAFE})


def check(p: subprocess.CompletedProcess, recognisable: bool = True) -> str:
    """Nothing raw, no forged row; the hostile text still readable (its escapes shown)."""
    for name, text in (("stdout", p.stdout), ("stderr", p.stderr)):
        assert raw(text) == [], (p.args[3:5], name, raw(text), text)
        assert not re.search(r"^(## )?forged", text, re.M), (p.args[3:5], name, text)
    both = p.stdout + p.stderr
    if recognisable:
        assert "forged row" in both and "\\x1b]52;c;" in both, (p.args[3:5], both)
    return both


@pytest.fixture
def repo(tmp_path):
    root = make_repo(tmp_path / "repo")
    (root / "a.txt").write_text("one\ntwo\nthree\n")
    commit_all(root)
    edit = {"range": {"start": {"line": 1, "character": 0}, "end": {"line": 2, "character": 0}}, "newText": BODY}
    (tmp_path / "edit.json").write_text(json.dumps({"changes": {(root / "a.txt").as_uri(): [edit]}}))
    return root


def _task_and_proposal(root) -> str:
    check(stet("task", "start", H, "--id", H, "--goal", H, "--agent", H, cwd=root))
    check(stet("task", "step", H, H, cwd=root))
    for extra in (["--why", H], ["--question"]):
        check(stet("task", "note", H, H, *extra, cwd=root), recognisable=False)
    check(stet("task", "read", H, "a.txt", cwd=root), recognisable=False)
    edit = str(root.parent / "edit.json")
    p = stet("propose", "--edit", edit, "--id", H, "--task", H, "-m", H, "--agent", H, cwd=root)
    check(p)
    (hunk,) = stet_json("status", cwd=root)["hunks"]
    return hunk["id"]


def test_nothing_an_agent_wrote_reaches_the_terminal_raw(repo):
    hid = _task_and_proposal(repo)
    for args in (["status"], ["status", "--all"], ["status", "--task", H], ["status", "--proposal", H]):
        check(stet(*args, cwd=repo))
    shown = check(stet("show", hid, cwd=repo), recognisable=False)
    assert "+1    TWO \\x1b[2K\\x1b]52;c;QQ==\\x07 x\\u202e y\tz" in shown  # a tab in code stays a tab
    assert "+2    \\x1b[1A\\x1b[2Kforged" in shown
    check(stet("reject", hid, "--feedback", H, "--request-id", H, cwd=repo))
    check(stet("log", cwd=repo))
    # the same change again, in the same task: said rejected before, with the feedback
    again = stet("propose", "--edit", str(repo.parent / "edit.json"), "--id", "again", "--task", H, cwd=repo)
    assert "rejected before" in check(again)
    check(stet("task", "list", cwd=repo))
    resumed = check(stet("resume", H, cwd=repo))
    assert "## Goal\n\n> ok\\x1b[2K" in resumed and "\n> ## forged row" in resumed  # quoted, line by line
    check(stet("task", "done", H, "--summary", H, cwd=repo))
    check(stet("show", H, cwd=repo))  # an error quoting the id: stderr
    check(stet("status", "--proposal", H + "x", cwd=repo))
    # --json is exact
    assert stet_json("status", "--all", cwd=repo)["hunks"][0]["message"] == H
    assert stet_json("show", hid, cwd=repo)["new"] == BODY.splitlines(keepends=True)
    # a patch (`stet export` into a pipe or a file) stays exact too: it is meant for `git apply`
    assert (
        "".join(f"+{line}" for line in BODY.splitlines(True)) in stet("export", "--status", "rejected", cwd=repo).stdout
    )


def test_a_run_says_the_feedback_and_the_file_names_inert(repo):
    hid = _task_and_proposal(repo)
    check(stet("reject", hid, "--feedback", H, cwd=repo))
    agent = f"open('a.txt', 'w').write('one\\n' + {BODY!r} + 'three\\n'); open({H!r} + '.bin', 'wb').write(b'\\0\\1')"
    p = stet("run", "--task", H, "-m", H, "--", sys.executable, "-c", agent, cwd=repo)
    both = check(p)
    assert "rejected before by the developer" in both and "not captured" in both, both


def test_doctor_and_watch_say_a_hostile_inbox_file_inert(repo):
    assert stet("init", cwd=repo).returncode == 0
    inbox = repo / ".stet" / "inbox"
    name = f"x{H.replace(chr(10), '').replace(chr(13), '')}.txt"  # a path line cannot hold a newline
    patch = f"--- a/{name}\n+++ b/{name}\n@@ -1 +1 @@\n-a\n+b\n"
    (inbox / "p1.patch").write_text(patch)
    check(stet("doctor", "--fix", cwd=repo))
    env = {k: v for k, v in os.environ.items() if k not in ("STET_DB", "STET_FAULT")}
    watch = subprocess.Popen([*STET, "watch"], cwd=repo, env=env, stderr=subprocess.PIPE)
    try:
        (inbox / "p2.patch").write_text(patch)
        deadline = time.monotonic() + 60
        while not (inbox / "failed" / "p2.error").exists():
            assert time.monotonic() < deadline and watch.poll() is None, "p2.patch never failed"
            time.sleep(0.1)
    finally:
        watch.send_signal(signal.SIGTERM)
        _, err = watch.communicate(timeout=30)
    assert watch.returncode == 0, err
    check(subprocess.CompletedProcess([*STET, "watch"], 0, "", err.decode()))


def _on_a_terminal(root, *args: str) -> str:
    """`stet ARGS` with its stdout a terminal (colours on), all it printed there."""
    master, slave = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "STET_DB", "STET_FAULT")}
    proc = subprocess.Popen(
        [*STET, *args], cwd=root, stdout=slave, stderr=subprocess.PIPE, env={**env, "TERM": "xterm"}
    )
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the terminal's other side is closed
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    assert proc.wait(timeout=60) == 0, proc.stderr.read()
    proc.stderr.close()
    return out.decode().replace("\r\n", "\n")  # the terminal's own line ends


def test_on_a_terminal_stets_colours_work_and_the_agents_escapes_do_not(repo):
    _task_and_proposal(repo)
    status = _on_a_terminal(repo, "status")
    assert "\x1b[33mpending" in status, status  # Stet's own colour
    without_colours = re.sub(r"\x1b\[\d+m", "", status)
    assert raw(without_colours) == [] and "\\x1b]52;c;" in without_colours, status
    diff = _on_a_terminal(repo, "export", "--status", "pending")
    assert raw(diff) == [] and "+\\x1b[1A\\x1b[2Kforged" in diff and "\tz" in diff, diff
