"""One codec per agent: its hook input as the agent's loop's events (agents/turn.py), the
loop's answers in the agent's own shape. A codec module has `AGENT` (a turn.Agent), `decode`
and `encode`. The names are the ones `stet integrate` and `stet hook` take."""

from __future__ import annotations

NAMES = ("claude-code", "codex", "gemini", "copilot", "cursor", "qwen")  # light: the command line's parser reads it
