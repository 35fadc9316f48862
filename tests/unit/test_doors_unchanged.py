"""The rule for the doors: the CLI's help, the MCP tools and their schemas, and the
LSP methods and commands stay byte-identical while the code behind them moves."""

import json

from support.doors import GOLDEN, snapshot


def test_doors_unchanged(monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    now = json.loads(json.dumps(snapshot(), sort_keys=True))
    golden = json.loads(GOLDEN.read_text())
    for door in ("cli", "mcp", "lsp"):
        assert now[door] == golden[door], door
