"""The real Codex CLI (the pinned npm release, support/agents_install.py) driven end to end by the
scripted model over the Responses API: one apply_patch edit lands in the file, Codex returns the
patch's outcome to the model, and its hooks get the inputs recorded in
tests/fixtures/agents/codex-hooks.jsonl (the shape Stet's Codex hooks read)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support import residents
from support.capturetools import agent_repo, hunks
from support.clitools import commit_all, stet
from support.real_agents import (
    STET_HOOK,
    agent_binary,
    answered_as_expected,
    codex_env,
    codex_exec,
    dump_hooks,
    dumped,
    hook_runs,
    run,
    same_shape,
    teed,
)
from support.scripted_model import Request, ScriptedModel, text, tool

PATCH = "*** Begin Patch\n*** Update File: a.py\n@@\n-LIMIT = 10\n+LIMIT = 20\n*** End Patch\n"
CONTEXT = "Stet: the developer's review of your changes in this checkout: nothing pending"
EVENTS = ["SessionStart", "UserPromptSubmit", "PreToolUse", "PermissionRequest", "PostToolUse", "Stop"]
FEEDBACK = "keep the limit at 10: the API gateway caps requests at 10 per second"
# What Codex reads in each event's answer (agents/codecs/codex.py writes no other key).
ANSWER_KEYS = {
    "SessionStart": {"hookSpecificOutput", "systemMessage"},
    "UserPromptSubmit": {"hookSpecificOutput", "systemMessage"},
    "PreToolUse": {"hookSpecificOutput", "systemMessage"},
    "PostToolUse": {"hookSpecificOutput", "systemMessage"},
    "Stop": {"decision", "reason", "systemMessage"},
}


def test_real_codex_applies_a_scripted_patch_and_its_hooks_see_it(tmp_path):
    exe = agent_binary("codex")
    repo = agent_repo(tmp_path / "repo")
    home, dump = tmp_path / "home", tmp_path / "hooks.jsonl"
    (repo / ".codex").mkdir()
    (repo / ".codex" / "hooks.json").write_text(json.dumps(dump_hooks(EVENTS, dump)))

    with ScriptedModel() as model:
        model.play([tool("apply_patch", PATCH), text("raised")])
        p = run(codex_exec(exe, "raise the limit to 20"), repo, codex_env(home, model.url, repo))
        assert p.returncode == 0, (p.stdout[-2000:], p.stderr[-2000:])
        events = [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]
        assert events[-1]["type"] == "turn.completed", events
        assert (repo / "a.py").read_text().startswith("LIMIT = 20\n")

        first, second = model.turns()
        offered = {t.get("name"): t["type"] for t in first.body["tools"]}
        assert offered["apply_patch"] == "custom", offered
        (output,) = [i for i in second.body["input"] if i.get("type") == "custom_tool_call_output"]
        assert "Success. Updated the following files:\nM a.py" in output["output"], output

    seen = dumped(dump, {str(repo): "$CWD", str(home): "$HOME"})
    assert [e["hook_event_name"] for e in seen] == [
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "Stop",
    ]
    pre = seen[2]
    assert (pre["tool_name"], pre["tool_input"], pre["cwd"]) == ("apply_patch", {"command": PATCH}, "$CWD")
    same_shape(seen, "codex-hooks.jsonl")


def test_real_codex_gives_the_model_hook_context_and_a_deny_reason(tmp_path):
    """SessionStart's additionalContext reaches the model; a PreToolUse answer in Claude Code's deny
    shape stops the patch, the model getting the reason in the call's output (what Stet's Codex hooks
    will answer at a session's start and for the redo of a rejected change)."""
    exe = agent_binary("codex")
    repo = agent_repo(tmp_path / "repo")
    home, dump = tmp_path / "home", tmp_path / "hooks.jsonl"
    reason = "The developer rejected this change to a.py: keep the limit at 10"
    deny = {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": reason}
    (repo / ".codex").mkdir()
    start = {"hookEventName": "SessionStart", "additionalContext": CONTEXT}
    answers = {"PreToolUse": {"hookSpecificOutput": deny}, "SessionStart": {"hookSpecificOutput": start}}
    hooks = dump_hooks(["SessionStart", "PreToolUse"], dump, answers=answers)
    (repo / ".codex" / "hooks.json").write_text(json.dumps(hooks))

    with ScriptedModel() as model:
        model.play([tool("apply_patch", PATCH), text("understood")])
        p = run(codex_exec(exe, "raise the limit to 20"), repo, codex_env(home, model.url, repo))
        assert p.returncode == 0, (p.stdout[-2000:], p.stderr[-2000:])
        assert (repo / "a.py").read_text().startswith("LIMIT = 10\n")
        first, second = model.turns()
        told = [i for i in first.body["input"] if CONTEXT in json.dumps(i)]
        assert [i["role"] for i in told] == ["developer"], told
        (output,) = [i for i in second.body["input"] if i.get("type") == "custom_tool_call_output"]
        assert output["output"].startswith(f"Command blocked by PreToolUse hook: {reason}"), output


def codex(exe: Path, repo: Path, env: dict[str, str], *args: str) -> str:
    """One `codex exec` run to its end; returns its session (thread) id."""
    p = run([*codex_exec(exe, args[-1])[:-1], *args], repo, env)
    assert p.returncode == 0, (p.stdout[-2000:], p.stderr[-2000:])
    events = [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]
    assert events[-1]["type"] == "turn.completed", events
    (thread,) = [e["thread_id"] for e in events if e["type"] == "thread.started"]
    return thread


def outputs(request: Request) -> list[str]:
    return [i["output"] for i in request.body["input"] if i.get("type") == "custom_tool_call_output"]


def said(request: Request, role: str) -> list[str]:
    """The texts of the messages of `role` in a request's input."""
    return [
        part.get("text", "")
        for i in request.body["input"]
        if i.get("type") == "message" and i.get("role") == role
        for part in i["content"]
    ]


@pytest.mark.parametrize("resident", ["off", "on"])
def test_real_codex_with_stets_hooks_edit_captured_rejected_and_its_redo_denied(tmp_path, resident):
    """`stet integrate codex`'s hooks in the real Codex: its apply_patch captured at the turn's end
    into task codex-SESSION (kept in the file), the open review told at the next session's start
    (a developer message), the redo of the rejected change denied with the developer's words as
    the call's output; every hook answered as Codex reads it. Each hook in its own process, and (as
    users run it) handed to the resident."""
    exe = agent_binary("codex")
    repo = agent_repo(tmp_path / "repo")
    assert stet("integrate", "codex", "--stet", STET_HOOK, cwd=repo).returncode == 0
    log = tmp_path / "hooks.jsonl"
    teed(repo / ".codex" / "hooks.json", log)
    commit_all(repo, "codex set up")

    with ScriptedModel() as model:
        env = {**codex_env(tmp_path / "home", model.url, repo), **(residents.ON if resident == "on" else {})}
        env.setdefault("STET_RESIDENT", "off")
        model.play([tool("apply_patch", PATCH), text("raised")])
        session = codex(exe, repo, env, "raise the limit to 20")
        if resident == "on":
            assert residents.calls(repo) > 0, "no hook went through the resident"
            residents.stop(repo)  # the next session's hooks start it again
        assert (repo / "a.py").read_text().startswith("LIMIT = 20\n")
        (hunk,) = hunks(repo, "--task", f"codex-{session}")
        assert (hunk["status"], hunk["oldText"], hunk["newText"]) == ("pending", "LIMIT = 10\n", "LIMIT = 20\n")
        assert hunk["kept"] is True
        assert "Success. Updated the following files" in outputs(model.turns()[-1])[0]

        assert stet("reject", hunk["id"], "--feedback", FEEDBACK, cwd=repo).returncode == 0
        assert (repo / "a.py").read_text().startswith("LIMIT = 10\n")

        seen = len(model.requests)
        model.play([tool("apply_patch", PATCH), text("understood")])
        second = codex(exe, repo, env, "raise the limit to 20 again")
        assert second != session
        first, last = [r for r in model.requests[seen:] if r.main]
        told = [t for t in said(first, "developer") if t.startswith("Stet: the developer's review of your changes")]
        assert len(told) == 1 and f"REJECTED a.py line 1: the developer said: {FEEDBACK}" in told[0], told
        reason = f"The developer rejected this change to a.py: {FEEDBACK}"
        assert outputs(last)[0].startswith(f"Command blocked by PreToolUse hook: {reason}"), outputs(last)
        assert (repo / "a.py").read_text().startswith("LIMIT = 10\n")
        assert [(h["id"], h["status"]) for h in hunks(repo)] == [(hunk["id"], "rejected")]
        if resident == "on":
            residents.stop(repo)

    runs = hook_runs(log)
    answers = answered_as_expected(runs, ANSWER_KEYS)
    assert [r["input"]["hook_event_name"] for r in runs] == [*EVENTS_OF_A_PATCH, *EVENTS_OF_A_PATCH[:3], "Stop"]
    notice = f"Stet: 1 hunk(s) of this turn are waiting for review (left in the files; task codex-{session})"
    assert answers["Stop"] == [{"systemMessage": notice}, {}], answers["Stop"]
    deny = answers["PreToolUse"][1]["hookSpecificOutput"]
    assert (deny["permissionDecision"], deny["permissionDecisionReason"]) == ("deny", reason)


EVENTS_OF_A_PATCH = ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"]


def test_real_codex_sent_back_with_the_developers_feedback_once(tmp_path):
    """Request changes (`stet integrate codex --request-changes`) in the real Codex: while the session
    works on (`codex exec resume`), the developer rejects a hunk of it with feedback; at the turn's end
    Stop answers `decision: "block"`, the model gets the feedback as a user message and goes on, and
    the next stop (`stop_hook_active`) lets it end: once, no loop."""
    exe = agent_binary("codex")
    repo = agent_repo(tmp_path / "repo")
    assert stet("integrate", "codex", "--stet", STET_HOOK, "--request-changes", cwd=repo).returncode == 0
    log = tmp_path / "hooks.jsonl"
    teed(repo / ".codex" / "hooks.json", log)
    commit_all(repo, "codex set up")
    other = "*** Begin Patch\n*** Update File: b.txt\n@@\n-beta\n+BETA\n*** End Patch\n"

    with ScriptedModel() as model:
        env = {**codex_env(tmp_path / "home", model.url, repo), "STET_RESIDENT": "off"}
        model.play([tool("apply_patch", PATCH), text("raised")])
        session = codex(exe, repo, env, "raise the limit to 20")
        (hunk,) = hunks(repo, "--task", f"codex-{session}")

        def rejected_meanwhile(_body: dict):
            assert stet("reject", hunk["id"], "--feedback", FEEDBACK, cwd=repo).returncode == 0
            return tool("apply_patch", other)

        seen = len(model.requests)
        model.play([rejected_meanwhile, text("b.txt done"), text("the limit stays at 10")])
        assert codex(exe, repo, env, "resume", session, "now capitalise beta in b.txt") == session
        turns = [r for r in model.requests[seen:] if r.main]
        assert len(turns) == 3, [r.answer for r in turns]
        before = len(said(turns[1], "user"))
        back = said(turns[2], "user")[before:]
        assert len(back) == 1 and f"REJECTED a.py line 1: {FEEDBACK}" in back[0], back
        assert "Stet: the developer rejected changes of yours with feedback" in back[0], back
        assert (repo / "b.txt").read_text() == "alpha\nBETA\ngamma\n"
        statuses = sorted((h["status"], h["newText"]) for h in hunks(repo, "--task", f"codex-{session}"))
        assert statuses == [("pending", "BETA\n"), ("rejected", "LIMIT = 20\n")], statuses

    runs = hook_runs(log)
    answered_as_expected(runs, ANSWER_KEYS)
    stops = [(r["input"]["stop_hook_active"], answers_of(r)) for r in runs if r["input"]["hook_event_name"] == "Stop"]
    assert [(active, a.get("decision")) for active, a in stops] == [(False, None), (False, "block"), (True, None)]
    assert stops[1][1]["reason"] in back[0]


def answers_of(run: dict) -> dict:
    return json.loads(run["stdout"]) if run["stdout"].strip() else {}


def heredoc(patch: str) -> dict:
    """exec_command's arguments running Codex's patch through its shell: `apply_patch <<'EOF' … EOF`."""
    return {"cmd": f"apply_patch <<'EOF'\n{patch}EOF\n"}


def test_real_codex_patching_through_its_shell_is_captured_and_the_redo_denied(tmp_path):
    """A model Codex offers no apply_patch tool runs `apply_patch <<'EOF' … EOF` through exec_command:
    Codex applies it itself and gives the PreToolUse hook a `Bash` call with that command (no
    PostToolUse). Stet's hooks read the patch there: captured into codex-SESSION, and the redo of
    the rejected change denied, the model getting the developer's words as the command's output."""
    exe = agent_binary("codex")
    repo = agent_repo(tmp_path / "repo")
    assert stet("integrate", "codex", "--stet", STET_HOOK, cwd=repo).returncode == 0
    log = tmp_path / "hooks.jsonl"
    teed(repo / ".codex" / "hooks.json", log)
    commit_all(repo, "codex set up")

    with ScriptedModel() as model:
        env = {**codex_env(tmp_path / "home", model.url, repo, model="scripted-model"), "STET_RESIDENT": "off"}
        model.play([tool("exec_command", {"cmd": "cat b.txt"}), tool("exec_command", heredoc(PATCH)), text("raised")])
        session = codex(exe, repo, env, "raise the limit to 20")
        assert (
            "alpha\nbeta"
            in [i for i in model.turns()[1].body["input"] if i.get("type") == "function_call_output"][0]["output"]
        )
        assert "apply_patch" not in {t.get("name") for t in model.turns()[0].body["tools"]}
        assert (repo / "a.py").read_text().startswith("LIMIT = 20\n")
        (hunk,) = hunks(repo, "--task", f"codex-{session}")
        assert (hunk["status"], hunk["oldText"], hunk["newText"]) == ("pending", "LIMIT = 10\n", "LIMIT = 20\n")

        assert stet("reject", hunk["id"], "--feedback", FEEDBACK, cwd=repo).returncode == 0
        seen = len(model.requests)
        model.play([tool("exec_command", heredoc(PATCH)), text("understood")])
        codex(exe, repo, env, "raise the limit to 20 again")
        last = [r for r in model.requests[seen:] if r.main][-1]
        (output,) = [i["output"] for i in last.body["input"] if i.get("type") == "function_call_output"]
        reason = f"The developer rejected this change to a.py: {FEEDBACK}"
        assert output.startswith(f"Command blocked by PreToolUse hook: {reason}"), output
        assert (repo / "a.py").read_text().startswith("LIMIT = 10\n")

    runs = hook_runs(log)
    answered_as_expected(runs, ANSWER_KEYS)
    pre = [r for r in runs if r["input"]["hook_event_name"] == "PreToolUse"]
    patched = ("Bash", {"command": heredoc(PATCH)["cmd"]})
    shell = ("Bash", {"command": "cat b.txt"})
    assert [(r["input"]["tool_name"], r["input"]["tool_input"]) for r in pre] == [shell, patched, patched]
    assert pre[0]["stdout"] == "", "any other command: nothing said (the thin client answers it)"
