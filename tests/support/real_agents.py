"""Running the real agent CLIs (installed by support/agents_install.py) against the scripted model
(support/scripted_model.py): where each binary is, the environment each runs in (its home in a temp
folder, a dummy key, its base URL at the scripted model, telemetry, updates and other traffic off),
and one run with a deadline."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from support.agents_install import AGENTS, Unavailable, binary

SERVER = str(Path(__file__).resolve().parents[2] / "server")
# Variables of the developer's own agents that must not reach the agent under test.
FOREIGN = ("ANTHROPIC_", "CLAUDE", "OPENAI_", "CODEX_", "GEMINI_", "GOOGLE_", "QWEN_")


def agent_binary(name: str) -> Path:
    """The agent's executable; the test is skipped, saying why in capitals, when it cannot be installed."""
    try:
        return binary(name)
    except Unavailable as e:
        package, version, _ = AGENTS[name]
        pytest.skip(f"REAL AGENT NOT RUN: {package}@{version} is not installed here: {e}")


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


PYTHON = sys.executable
