"""The `stet` command line."""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="stet", description="Review an AI coding agent's edits hunk by hunk, durably.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    p_serve = sub.add_parser("serve", help="run the language server on stdio (one per editor window)")
    p_serve.add_argument("--db", help="the review store (default: <workspace>/.stet/stet.db; or STET_DB)")
    p_demo = sub.add_parser("demo", help="a self-contained tour: propose, review, kill -9, restart, same state")
    p_demo.add_argument("--keep", action="store_true", help="keep the temporary workspace")
    args = parser.parse_args(argv)
    if args.command == "serve":
        from .lsp.server import serve

        serve(args.db)
        return 0
    if args.command == "demo":
        from .demo import run_demo

        return run_demo(keep=args.keep)
    parser.error(f"unknown command {args.command}")
    return 2


if __name__ == "__main__":
    sys.exit(main())
