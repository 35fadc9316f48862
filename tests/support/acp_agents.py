"""The real ACP agents the end-to-end tests run (installed by support/agents_install.py), each pointed
at the scripted model (support/scripted_model.py): its command, its environment, and the scripted
model's step that makes it edit one file.

- `claude-code-acp`: Claude Code's ACP adapter (@zed-industries/claude-code-acp), Claude Code bundled
  through @anthropic-ai/claude-agent-sdk, at ANTHROPIC_BASE_URL; offered the client's fs, the model
  gets `mcp__acp__Read/Edit/Write`, and an Edit goes through fs/read_text_file + fs/write_text_file.
- `gemini`: Gemini CLI in its ACP mode (`gemini --acp`; `--experimental-acp` is its deprecated name),
  at GOOGLE_GEMINI_BASE_URL; `replace` reads and writes through the client's fs.
- `codex-acp`: Codex's ACP adapter (@zed-industries/codex-acp, a native binary with Codex inside),
  reading Codex's config.toml (a model provider at the scripted model); it writes the file itself
  (no fs/write_text_file). Run with no sandbox (its bubblewrap is not found here) and approval policy
  "untrusted", so an edit asks the editor's permission as in an editor's default set-up.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from support.real_agents import agent_binary, claude_env, codex_env, gemini_env
from support.scripted_model import Step, tool

CODEX_FLAGS = ["-c", 'sandbox_mode="danger-full-access"', "-c", 'approval_policy="untrusted"']


@dataclass(frozen=True)
class AcpAgent:
    name: str  # the key in agents_install.AGENTS and the fixture's name
    args: tuple[str, ...]  # after the binary
    environment: Callable[[Path, str, Path], dict[str, str]]  # (home, model url, repo) -> env
    editing: Callable[[Path, Path, str, str], Step]  # (repo, file, old, new) -> the model's edit
    agent_name: str  # the name Stet gives it (task acp-<agent_name>-<session>)

    def command(self) -> list[str]:
        """The agent's command line; the test is skipped (loudly) when it cannot be installed."""
        return [str(agent_binary(self.name)), *self.args]

    def env(self, home: Path, model_url: str, repo: Path) -> dict[str, str]:
        return self.environment(home, model_url, repo)

    def edit(self, repo: Path, path: Path, old: str, new: str) -> Step:
        return self.editing(repo, path, old, new)


def _claude_edit(repo: Path, path: Path, old: str, new: str) -> Step:
    return tool("mcp__acp__Edit", {"file_path": str(path), "old_string": old, "new_string": new})


def _gemini_edit(repo: Path, path: Path, old: str, new: str) -> Step:
    edit = {"file_path": str(path), "old_string": old, "new_string": new, "instruction": "change it"}
    return tool("replace", edit)


def _codex_edit(repo: Path, path: Path, old: str, new: str) -> Step:
    """Codex's patch (a free-form `apply_patch`), one line replaced, the path relative to `repo`."""
    minus = "".join(f"-{line}\n" for line in old.splitlines())
    plus = "".join(f"+{line}\n" for line in new.splitlines())
    rel = path.relative_to(repo).as_posix()
    return tool("apply_patch", f"*** Begin Patch\n*** Update File: {rel}\n@@\n{minus}{plus}*** End Patch\n")


AGENTS: dict[str, AcpAgent] = {
    "claude-code-acp": AcpAgent(
        "claude-code-acp", (), lambda home, url, repo: claude_env(home, url), _claude_edit, "claude-code-acp"
    ),
    "gemini": AcpAgent("gemini", ("--acp",), lambda home, url, repo: gemini_env(home, url), _gemini_edit, "gemini-cli"),
    "codex-acp": AcpAgent("codex-acp", tuple(CODEX_FLAGS), codex_env, _codex_edit, "codex-acp"),
}
