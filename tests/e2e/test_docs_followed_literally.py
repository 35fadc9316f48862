"""A newcomer's first hour, followed literally: what the README and docs/ tell a user to do
works, and what goes wrong says what to do in the user's own terms."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from support.clitools import stet
from support.rawlsp import RawServer

URL = "postgresql://dev:s3cret@/review?host=/nonexistent"


def without_psycopg(tmp_path: Path) -> dict:
    """An environment whose Python has no psycopg (as a plain `pip install -e .` gives): the
    import fails exactly as Python fails it for a package that is not installed."""
    shim = tmp_path / "no-psycopg" / "psycopg"
    shim.mkdir(parents=True)
    (shim / "__init__.py").write_text("raise ModuleNotFoundError(\"No module named 'psycopg'\", name='psycopg')\n")
    path = os.pathsep.join(p for p in [str(shim.parent), os.environ.get("PYTHONPATH", "")] if p)
    return {"PYTHONPATH": path}


def test_a_postgresql_url_without_its_driver_names_the_extra_to_install(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    env = without_psycopg(tmp_path)
    for args, extra in ((["--db", URL, "status"], {}), (["status"], {"STET_DB": URL})):
        for resident in ("off", "on"):
            p = stet(*args, cwd=ws, env={**env, **extra, "STET_RESIDENT": resident})
            assert p.returncode == 2, (args, p.stdout, p.stderr)
            assert "Traceback" not in p.stderr, p.stderr
            assert "stet: StoreUnavailable:" in p.stderr and "no PostgreSQL driver (psycopg)" in p.stderr, p.stderr
            assert "pip install -e '.[postgresql]'" in p.stderr, p.stderr
            assert "s3cret" not in p.stderr and "dev:***@" in p.stderr, "the password is never shown"
    assert not (ws / ".stet" / "stet.db").exists(), "no SQLite store made instead"


def test_stet_serve_on_a_postgresql_url_without_its_driver_tells_the_editor(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    s = RawServer(ws, env={**without_psycopg(tmp_path), "STET_DB": URL})
    try:
        s.initialize(wait_restored=False)
        shown = s.wait_note("window/showMessage", timeout=120)
        assert shown["type"] == 1 and "no PostgreSQL driver (psycopg)" in shown["message"], shown
        assert "[postgresql]" in shown["message"] and "s3cret" not in shown["message"]
        restored = s.wait_note("stet/restored", timeout=120)
        assert "no PostgreSQL driver" in restored["error"], restored
        answer = s.request("stet/listHunks", {})
        assert answer["error"]["code"] == -32005 and "no PostgreSQL driver" in answer["error"]["message"], answer
    finally:
        s.kill()
    assert "Traceback" not in s.tail(100_000), s.tail()


def stet_on_path(tmp_path: Path) -> dict:
    """An environment with this checkout's `stet` first on PATH (as `pip install -e .` gives)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "stet").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m stet "$@"\n')
    (bin_dir / "stet").chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("STET_", "GIT_"))}
    return {**env, "PATH": f"{bin_dir}{os.pathsep}{env['PATH']}", "NO_COLOR": "1"}


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# Stands in for `claude`: once the server answers, each hook event is POSTed as Claude Code
# POSTs it (the settings' url and headers, $STET_TOKEN filled in from the environment).
CLAUDE = r"""
import json, os, socket, sys, time, urllib.error, urllib.request
hook = json.load(open(".claude/settings.json"))["hooks"]["PreToolUse"][0]["hooks"][0]
host, port = hook["url"].split("/")[2].split(":")
deadline = time.monotonic() + 120
while True:
    try:
        socket.create_connection((host, int(port)), timeout=1).close()
        break
    except OSError:
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.1)
auth = hook["headers"]["Authorization"].replace("$STET_TOKEN", os.environ.get("STET_TOKEN", ""))
body = {"session_id": "s1", "cwd": os.getcwd(), "hook_event_name": "UserPromptSubmit", "prompt": "go"}
req = urllib.request.Request(hook["url"], data=json.dumps(body).encode(), method="POST",
                             headers={"content-type": "application/json", "Authorization": auth})
try:
    with urllib.request.urlopen(req, timeout=30) as r:
        print("hook answered", r.status)
except urllib.error.HTTPError as exc:
    print("hook answered", exc.code)
"""


def documented_http_recipe() -> str:
    text = (Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text()
    return text.split("**HTTP hooks.**", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]


def test_the_documented_http_hook_recipe_run_literally_is_answered(tmp_path):
    root = tmp_path / "app"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (tmp_path / "claude.py").write_text(CLAUDE)
    port = str(free_port())
    recipe = documented_http_recipe().replace("8765", port)
    assert "\nclaude\n" in recipe, recipe
    # The recipe as typed, `claude` being the stand-in; the background server is stopped after.
    script = recipe.replace("\nclaude\n", f"\npython3 {tmp_path / 'claude.py'}\nkill $! && wait $!\n")
    p = subprocess.run(
        ["bash", "-c", script], cwd=root, env=stet_on_path(tmp_path), capture_output=True, text=True, timeout=300
    )
    assert "hook answered 200" in p.stdout, (p.stdout, p.stderr)
    assert "stet mcp: refused" not in p.stderr, p.stderr


def test_a_hook_refused_for_its_token_is_said_in_the_servers_terminal(tmp_path):
    root = tmp_path / "app"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (tmp_path / "claude.py").write_text(CLAUDE)
    port = str(free_port())
    env = stet_on_path(tmp_path)
    assert subprocess.run(["stet", "integrate", "claude-code", "--http", port], cwd=root, env=env).returncode == 0
    server = subprocess.Popen(["stet", "mcp", "--http", port], cwd=root, env=env, stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(3):  # Claude Code started without STET_TOKEN: every hook is refused
            p = subprocess.run(
                [sys.executable, str(tmp_path / "claude.py")], cwd=root, env=env, capture_output=True, text=True
            )
            assert "hook answered 401" in p.stdout, (p.stdout, p.stderr)
    finally:
        server.terminate()
        _, err = server.communicate(timeout=60)
    said = [line for line in err.splitlines() if line.startswith("stet mcp: refused")]
    assert len(said) == 1, err  # once a minute, not once a hook
    assert "without the right bearer token (401)" in said[0] and "stet mcp --print-token" in said[0], said


def letters_repo(tmp_path: Path) -> tuple[Path, str]:
    """The README's "Accept part of a hunk" example: l5-l7 replaced by A-D, one pending hunk."""
    from support.clitools import commit_all, make_repo, stet_json

    root = make_repo(tmp_path / "r")
    (root / "app.txt").write_text("".join(f"l{i}\n" for i in range(1, 9)))
    commit_all(root)
    (root / "app.txt").write_text("l1\nl2\nl3\nl4\nA\nB\nC\nD\nl8\n")
    answer = stet_json("capture", "-m", "letters", cwd=root)
    return root, answer["hunks"][0]["id"]


def test_line_errors_use_the_numbers_the_user_typed(tmp_path):
    root, hid = letters_repo(tmp_path)
    p = stet("accept", hid, "--old", "9", cwd=root)
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert f"hunk {hid}: --old 9 is outside the hunk: its old lines are -1..-3" in p.stderr, p.stderr
    assert "0-based" not in p.stderr and "[8, 8]" not in p.stderr
    p = stet("reject", hid, "--new", "1,5-6", "--feedback", "no", cwd=root)
    assert p.returncode == 2 and "--new 5-6 is outside the hunk: its new lines are +1..+4" in p.stderr, p.stderr


def test_a_hunk_decided_in_parts_names_its_parts(tmp_path):
    from support.clitools import stet_json

    root, hid = letters_repo(tmp_path)
    answer = stet_json("accept", hid, "--old", "1", "--new", "1-2", cwd=root)
    parts = f"decide {answer['part']['id']} or {answer['rest']['id']} instead"
    for args in (["accept", hid, "--old", "9"], ["reject", hid, "--old", "2"], ["accept", hid]):
        p = stet(*args, cwd=root)
        assert p.returncode == 1, (args, p.stdout, p.stderr)
        assert f"hunk {hid}: it was decided in parts: {parts}" in p.stderr, (args, p.stderr)
        assert "outside the hunk" not in p.stderr


def test_turn_of_no_turn_is_an_error(tmp_path):
    root, _ = letters_repo(tmp_path)
    for spec in ("last", "5", "8a3d5c1e-2f4b-4e6a-9c7d-1b2e3f4a5b6c:1"):
        p = stet("status", "--turn", spec, cwd=root)
        assert p.returncode == 2 and "no turn was captured here yet" in p.stderr, (spec, p.stdout, p.stderr)


DOCS_CLI = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


def test_what_docs_say_of_creating_a_store_is_what_the_commands_do(tmp_path):
    from support.clitools import make_repo

    text = " ".join(DOCS_CLI.read_text().split())
    said = text.split("Where there is no store yet,", 1)[1].split("a hook says nothing and exits 0.", 1)[0]
    creating = {"capture": [], "snapshot": ["--all"], "task start": ["T", "--id", "t"], "mcp": ["--print-token"]}
    reading = {"status": [], "show": ["hx"], "log": [], "accept": ["hx"], "export": [], "resume": ["t"]}
    for n, (command, args) in enumerate([*creating.items(), *reading.items()]):
        assert f"`{command}`" in said, f"docs/cli.md does not say whether `stet {command}` creates a store"
        root = make_repo(tmp_path / f"r{n}")
        p = stet(*command.split(), *args, cwd=root)
        made = (root / ".stet" / "stet.db").exists()
        if command in creating:
            assert p.returncode == 0 and made, (command, p.stderr)
        else:
            assert p.returncode == 2 and not made and "no stet store found" in p.stderr.lower(), (command, p.stderr)
    root = make_repo(tmp_path / "hook")
    body = '{"session_id": "s", "cwd": "%s", "hook_event_name": "SessionStart", "source": "startup"}' % root
    p = stet("hook", "claude-code", cwd=root, input=body)
    assert p.returncode == 0 and not (root / ".stet").exists(), p.stderr


def test_stet_hook_exits_0_on_anything_as_the_docs_say(tmp_path):
    row = next(line for line in DOCS_CLI.read_text().splitlines() if line.startswith("| `stet hook claude-code"))
    assert "always exit 0" in row and "or 1" not in row, row
    for body in ("{", '{"hook_event_name": "Bogus"}', "x" * 1000):
        p = stet("hook", "claude-code", cwd=tmp_path, input=body)
        assert p.returncode == 0 and p.stderr.startswith("stet hook: "), (body[:20], p.returncode, p.stderr)


def test_stet_resident_help_speaks_to_a_user():
    p = stet("resident", "--help", cwd=Path.cwd())
    assert p.returncode == 0 and "stops by itself" in p.stdout, p.stdout
    for internal in ("client.py", "cli/main.py", "catch_up", "_stop_when_told", "STOP_GRACE"):
        assert internal not in p.stdout, (internal, p.stdout)


def test_the_protocol_page_is_written_for_integrators_not_as_a_brief():
    import re

    text = (DOCS_CLI.parent / "protocol.md").read_text()
    brief = re.findall(
        r"(?i)closing note|mirror this contract|\.\./shared/|\bissue \d+|\b(?:first|second|third|fourth) round|"
        r"this implementation|every implementation",
        text,
    )
    assert brief == [], brief
    for page in ("README.md", "docs/cli.md"):  # links into it still land on a heading
        for anchor in re.findall(r"protocol\.md#([\w-]+)", (DOCS_CLI.parents[1] / page).read_text()):
            headings = {
                re.sub(r"[^\w\- ]", "", h).strip().lower().replace(" ", "-")
                for h in re.findall(r"^#+ (.+)$", text, re.M)
            }
            assert anchor in headings, (page, anchor)
