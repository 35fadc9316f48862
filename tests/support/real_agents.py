"""Running the real agent CLIs (installed by support/agents_install.py) against the scripted model
(support/scripted_model.py): where each binary is, the environment each runs in (its home in a temp
folder, a dummy key, its base URL at the scripted model, telemetry, updates and other traffic off),
and one run with a deadline."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from support.agents_install import AGENTS, Unavailable, binary

PYTHON = sys.executable
SERVER = str(Path(__file__).resolve().parents[2] / "server")
# Variables of the developer's own agents that must not reach the agent under test.
FOREIGN = ("ANTHROPIC_", "CLAUDE", "OPENAI_", "CODEX_", "GEMINI_", "GOOGLE_", "QWEN_")


def agent_binary(name: str) -> Path:
    """The agent's executable; the test is skipped, saying why in capitals, when it cannot be installed
    (it fails instead where STET_REQUIRE_AGENTS is set, as in .ci/run)."""
    try:
        return binary(name)
    except Unavailable as e:
        package, version, _ = AGENTS[name]
        said = f"REAL AGENT NOT RUN: {package}@{version} is not installed here: {e}"
        if os.environ.get("STET_REQUIRE_AGENTS"):
            pytest.fail(said)
        pytest.skip(said)


def base_env(home: Path) -> dict[str, str]:
    """The test's environment without the developer's agent settings, HOME in `home`, the Stet of
    this tree importable by the hooks (`python -m stet`)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(FOREIGN) and k not in ("STET_DB", "STET_FAULT")}
    home.mkdir(parents=True, exist_ok=True)
    path = os.pathsep.join(p for p in (SERVER, env.get("PYTHONPATH", "")) if p)
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), XDG_CACHE_HOME=str(home / ".cache"))
    env.update(PYTHONPATH=path, NO_PROXY="127.0.0.1,localhost", NO_COLOR="1", CI="1")
    return env


def claude_env(home: Path, model_url: str) -> dict[str, str]:
    """Claude Code at the scripted model, with its documented switches for telemetry, error reports,
    auto-update and every other non-essential request off; IS_SANDBOX lets it skip permissions as root."""
    env = base_env(home)
    env.update(
        ANTHROPIC_BASE_URL=model_url,
        ANTHROPIC_API_KEY="sk-ant-scripted-model",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_AUTOUPDATER="1",
        DISABLE_TELEMETRY="1",
        DISABLE_ERROR_REPORTING="1",
        DISABLE_BUG_COMMAND="1",
        IS_SANDBOX="1",
    )
    return env


def run(cmd: list[str], cwd: Path, env: dict[str, str], timeout: float = 240) -> subprocess.CompletedProcess[str]:
    """One run of an agent to its end (stdin closed); its output kept for the assertion messages."""
    try:
        return subprocess.run(
            cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
        )
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"")[-2000:] if isinstance(e.stdout, bytes) else (e.stdout or "")[-2000:]
        raise AssertionError(f"{cmd[0]} did not finish in {timeout} s: {out!r}") from None


# A model name Codex knows (its bundled model list): it offers `apply_patch` (a free-form `custom`
# tool) only to those; to any other model only `exec_command`.
CODEX_MODEL = "gpt-5.5"


def codex_env(home: Path, model_url: str, trusted: Path, model: str = CODEX_MODEL) -> dict[str, str]:
    """Codex at the scripted model: its CODEX_HOME in `home` with a config.toml naming a model
    provider at the scripted model (wire_api "responses", the only one Codex speaks), update checks,
    analytics, plugins and apps off, and the project `trusted` (else its .codex/ is not read)."""
    env = base_env(home)
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    (codex_home / "config.toml").write_text(
        f'model = "{model}"\n'
        'model_provider = "scripted"\n'
        "check_for_update_on_startup = false\n"
        "[model_providers.scripted]\n"
        'name = "scripted"\n'
        f'base_url = "{model_url}/v1"\n'
        'wire_api = "responses"\n'
        'env_key = "SCRIPTED_MODEL_KEY"\n'
        "[features]\n"
        "plugins = false\n"
        "apps = false\n"
        "[analytics]\n"
        "enabled = false\n"
        f"[projects.{json.dumps(str(trusted))}]\n"
        'trust_level = "trusted"\n'
    )
    env.update(CODEX_HOME=str(codex_home), SCRIPTED_MODEL_KEY="scripted-model")
    return env


def codex_exec(exe: Path, prompt: str) -> list[str]:
    """`codex exec` as a script runs it: JSON events, no approvals or sandbox, and the project's
    hooks run without their review in Codex's /hooks (they are skipped silently until trusted)."""
    flags = ["--json", "--dangerously-bypass-approvals-and-sandbox", "--dangerously-bypass-hook-trust"]
    return [str(exe), "exec", *flags, prompt]


def gemini_env(home: Path, model_url: str) -> dict[str, str]:
    """Gemini CLI at the scripted model: its API-key auth chosen in the user settings (else "Invalid
    auth method selected", exit 41), usage statistics and updates off, the workspace trusted (else
    its project hooks are not run)."""
    env = base_env(home)
    settings = {
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "privacy": {"usageStatisticsEnabled": False},
        "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
    }
    (home / ".gemini").mkdir(parents=True, exist_ok=True)
    (home / ".gemini" / "settings.json").write_text(json.dumps(settings))
    env.update(GOOGLE_GEMINI_BASE_URL=model_url, GEMINI_API_KEY="scripted-model", GEMINI_CLI_TRUST_WORKSPACE="true")
    return env


def gemini_prompt(exe: Path, prompt: str) -> list[str]:
    return [str(exe), "-p", prompt, "--approval-mode", "yolo", "-o", "stream-json"]


DUMP = Path(__file__).with_name("hook_dump.py")


def dump_hooks(events: list[str], into: Path, matcher: str = "", answers: dict[str, dict] | None = None) -> dict:
    """A hooks configuration (Claude Code's shape, which Codex, Gemini CLI and Qwen Code share)
    running hook_dump.py for each event: every input the agent sends lands in `into`, one JSON line
    each; an event named in `answers` is answered that."""

    def hook(event: str) -> dict:
        command = f"{shlex.quote(PYTHON)} {shlex.quote(str(DUMP))} {shlex.quote(str(into))}"
        if answers and event in answers:
            command += " " + shlex.quote(json.dumps(answers[event]))
        return {"type": "command", "command": command, "name": "dump"}

    return {"hooks": {event: [{"matcher": matcher, "hooks": [hook(event)]}] for event in events}}


def dumped(path: Path, replace: dict[str, str]) -> list[dict]:
    """The recorded hook inputs, each path of the test's temp folders replaced by a placeholder."""
    text = path.read_text() if path.exists() else ""
    for real, placeholder in replace.items():
        text = text.replace(json.dumps(real)[1:-1], placeholder)
    return [json.loads(line) for line in text.splitlines()]


FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "agents"


def same_shape(seen: list[dict], name: str) -> None:
    """The hook inputs seen have the events and fields of the recorded fixture `name` (rewritten
    instead when STET_RECORD_AGENT_HOOKS=1): a new agent version that changes them is noticed."""
    fixture = FIXTURES / name
    if os.environ.get("STET_RECORD_AGENT_HOOKS") == "1":
        fixture.parent.mkdir(parents=True, exist_ok=True)
        fixture.write_text("".join(json.dumps(entry, sort_keys=True) + "\n" for entry in seen))
    recorded = [json.loads(line) for line in fixture.read_text().splitlines()]

    def shape(entries: list[dict]) -> list[tuple[str, list[str]]]:
        return [(e.get("hook_event_name", "?"), sorted(e)) for e in entries]

    assert shape(seen) == shape(recorded), (
        f"the hook inputs differ from {fixture} (STET_RECORD_AGENT_HOOKS=1 rewrites it)"
    )


def qwen_env(home: Path, model_url: str) -> dict[str, str]:
    """Qwen Code at the scripted model over the OpenAI-compatible API: its `openai` auth chosen in the
    user settings, usage statistics and updates off."""
    env = base_env(home)
    settings = {
        "security": {"auth": {"selectedType": "openai"}},
        "privacy": {"usageStatisticsEnabled": False},
        "general": {"disableAutoUpdate": True},
    }
    (home / ".qwen").mkdir(parents=True, exist_ok=True)
    (home / ".qwen" / "settings.json").write_text(json.dumps(settings))
    env.update(OPENAI_BASE_URL=f"{model_url}/v1", OPENAI_API_KEY="scripted-model", OPENAI_MODEL="qwen3-coder-plus")
    env.update(QWEN_CODE_SUPPRESS_YOLO_WARNING="1")
    return env


def qwen_prompt(exe: Path, prompt: str) -> list[str]:
    return [str(exe), "-p", prompt, "--approval-mode", "yolo", "-o", "stream-json"]


TEE = Path(__file__).with_name("hook_tee.py")
# `stet integrate … --stet STET_HOOK`: this tree's Stet, for the hooks and the MCP server alike.
STET_HOOK = f"{shlex.quote(PYTHON)} {shlex.quote(str(Path(__file__).with_name('stet_here.py')))}"


def teed(config: Path, log: Path) -> None:
    """Each hook command of the agent's JSON configuration `config` (as `stet integrate` wrote it) run
    through hook_tee.py, which records in `log` how it answered: the hooks stay Stet's own."""
    settings = json.loads(config.read_text())
    for entries in settings["hooks"].values():
        for entry in entries:
            for hook in entry["hooks"]:
                hook["command"] = f"{shlex.quote(PYTHON)} {shlex.quote(str(TEE))} {shlex.quote(str(log))} " + (
                    shlex.quote(hook["command"])
                )
    config.write_text(json.dumps(settings, indent=2))


def hook_runs(log: Path) -> list[dict]:
    """What each hook was given and answered (hook_tee.py's records), in the order they ran."""
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def answered_as_expected(runs: list[dict], keys: dict[str, set[str]]) -> dict[str, list[dict]]:
    """Every hook exited 0 with nothing on stderr, printing nothing or one JSON object whose keys are
    among those its event's answer takes (`keys`, by event name); returns the answers given, by
    event. An assertion error names the run that did not."""
    given: dict[str, list[dict]] = {}
    for r in runs:
        event = r["input"].get("hook_event_name", "?")
        assert (r["code"], r["stderr"]) == (0, ""), r
        answer = json.loads(r["stdout"]) if r["stdout"].strip() else {}
        assert isinstance(answer, dict) and set(answer) <= keys[event], r
        given.setdefault(event, []).append(answer)
    return given
