"""The real agent CLIs the end-to-end tests run, installed from the npm registry at pinned versions
into a cache outside the repository (~/.cache/stet-test-agents/PKG@VERSION, or $STET_AGENTS_CACHE),
re-used when present. Safe when several runs install at once: each installs into its own temporary
folder, then renames it into place (the first rename wins, the others drop theirs); a lock file keeps
them from downloading the same package twice.

`python tests/support/agents_install.py` installs them all (`make agents`); the tests find a binary
through `binary(NAME)`, which installs it when missing and raises `Unavailable` with the reason when
it cannot (no npm, the registry unreachable): the tests skip with that reason, loudly.

Versions: the latest stable each on the registry when pinned, each checked to run here with Node 20
(Claude Code and Qwen Code declare Node >= 22 but run: Claude Code is a native binary). The ACP
agents (tests/support/acp_agents.py): Claude Code's adapter (its Claude Code, 2.1.44, comes inside
through @anthropic-ai/claude-agent-sdk), Gemini CLI's own `--acp`, and Codex's adapter (a native
binary with Codex inside, chosen by platform through its optional dependencies), which reaches the
scripted model through Codex's config.toml."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# name -> (npm package, pinned version, its binary).
AGENTS: dict[str, tuple[str, str, str]] = {
    "claude": ("@anthropic-ai/claude-code", "2.1.332", "claude"),
    "codex": ("@openai/codex", "0.171.0", "codex"),
    "gemini": ("@google/gemini-cli", "0.61.0", "gemini"),
    "qwen": ("@qwen-code/qwen-code", "0.24.4", "qwen"),
    # Claude Code's ACP adapter (it bundles its Claude Code through @anthropic-ai/claude-agent-sdk).
    "claude-code-acp": ("@zed-industries/claude-code-acp", "0.16.2", "claude-code-acp"),
    # Codex's ACP adapter: a native binary (its npm package picks the platform's) reading Codex's config.
    "codex-acp": ("@zed-industries/codex-acp", "0.16.0", "codex-acp"),
}

DONE = ".stet-installed"
# npm gives up on an unreachable registry in seconds, not minutes, and once it did in this process
# the other agents are not tried again (the same reason is given for each).
FAST_FAIL = ["--fetch-retries=1", "--fetch-retry-mintimeout=2000", "--fetch-retry-maxtimeout=5000"]
_unreachable: list[str] = []
NETWORK = ("ECONNREFUSED", "ENOTFOUND", "ETIMEDOUT", "EAI_AGAIN", "ECONNRESET", "ENETUNREACH", "FetchError")


class Unavailable(Exception):
    """The agent cannot be installed here; the message says why."""


def cache_root() -> Path:
    explicit = os.environ.get("STET_AGENTS_CACHE")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "stet-test-agents"


def folder(name: str) -> Path:
    package, version, _ = AGENTS[name]
    return cache_root() / f"{package.replace('/', '+')}@{version}"


def binary(name: str, timeout: float = 600) -> Path:
    """The agent's executable, installed first when it is not in the cache."""
    package, version, exe = AGENTS[name]
    target = folder(name)
    path = target / "node_modules" / ".bin" / exe
    if (target / DONE).exists() and path.exists():
        return path
    if _unreachable:
        raise Unavailable(_unreachable[0])
    npm = shutil.which("npm")
    if npm is None:
        raise Unavailable(f"npm is not installed: cannot install {package}@{version}")
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / f".{target.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (target / DONE).exists() and path.exists():
            return path
        _install(npm, package, version, target, timeout)
    return path


def _install(npm: str, package: str, version: str, target: Path, timeout: float) -> None:
    temp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        cmd = [npm, "install", "--prefix", str(temp), "--no-audit", "--no-fund", *FAST_FAIL]
        cmd += ["--loglevel=error", f"{package}@{version}"]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise Unavailable(f"npm install {package}@{version} did not finish in {timeout:.0f} s") from None
        if p.returncode != 0:
            said = [line for line in (p.stderr or p.stdout).splitlines() if line.strip()][:4]
            reason = f"npm install {package}@{version} failed (is the registry reachable?): {' | '.join(said)}"
            if any(code in p.stderr for code in NETWORK):
                _unreachable.append(reason)
            raise Unavailable(reason)
        (temp / DONE).write_text(f"{package}@{version}\n")
        temp.chmod(0o755)
        if target.exists():  # a half-made folder of an older layout: replaced
            shutil.rmtree(target)
        os.rename(temp, target)
    finally:
        if temp.exists():
            shutil.rmtree(temp, ignore_errors=True)


def main(argv: list[str]) -> int:
    names = argv or list(AGENTS)
    failed = 0
    for name in names:
        started = time.monotonic()
        try:
            path = binary(name)
        except Unavailable as e:
            print(f"stet-test-agents: {name}: NOT INSTALLED: {e}", file=sys.stderr)
            failed += 1
            continue
        print(f"{name}: {path} ({time.monotonic() - started:.1f} s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
