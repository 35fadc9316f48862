"""`stet` of this tree, whatever environment runs it: `python stet_here.py ARGS` is `stet ARGS` with
this tree's server/ first on the path. For the commands `stet integrate … --stet` writes into a real
agent's configuration: Codex starts MCP servers with only a few of its own environment variables
(no PYTHONPATH), so `python -m stet` there would be whichever Stet the interpreter has installed."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "server"))

from stet.resident.client import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
