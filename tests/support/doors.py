"""What the doors show the outside world: every `stet ... --help`, the MCP tools and their
schemas, the LSP methods and commands the server registers. `test_doors_unchanged` holds
them to `golden/doors.json`; refresh it (`python tests/support/doors.py`) only when a
change to a door is meant."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import json
import os
import sys
from pathlib import Path

GOLDEN = Path(__file__).parents[1] / "unit" / "golden" / "doors.json"


def _commands(parser: argparse.ArgumentParser, prefix: list[str]) -> list[list[str]]:
    """Every command line that names a (sub)command, depth first."""
    found = [prefix]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found += _commands(sub, [*prefix, name])
    return found


def cli_help() -> dict[str, str]:
    from stet.cli.main import main
    from stet.cli.parser import build_parser

    out: dict[str, str] = {}
    for argv in _commands(build_parser(), []):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf), contextlib.suppress(SystemExit):
            main([*argv, "--help"])
        out[" ".join(argv)] = buf.getvalue()
    return out


def mcp_tools() -> dict:
    from stet.mcp.server import build

    server = build("/nonexistent/stet.db", ["/nonexistent"])
    tools = asyncio.run(server.list_tools())
    listed = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]
    return {"name": server.name, "instructions": server.instructions, "tools": listed}


def lsp_features() -> dict:
    from stet.lsp.handlers import register
    from stet.lsp.server import StetServer

    server = StetServer()
    register(server)
    fm = server.protocol.fm
    options = {k: server.protocol._converter.unstructure(v) for k, v in fm.feature_options.items()}
    return {"features": sorted(fm.features), "commands": sorted(fm.commands), "options": options}


def snapshot() -> dict:
    os.environ["COLUMNS"] = "100"  # argparse wraps help to the terminal's width
    return {"cli": cli_help(), "mcp": mcp_tools(), "lsp": lsp_features()}


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parents[2] / "server"))
    GOLDEN.write_text(json.dumps(snapshot(), indent=1, sort_keys=True) + "\n")
