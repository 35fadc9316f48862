"""`stet serve`: the language server on stdio."""

from __future__ import annotations

import logging
import os

from ..runtime.collector import tune_for_a_long_run
from .handlers import register
from .server import StetServer


def serve(db_path: str | None = None) -> None:
    logging.basicConfig(level=os.environ.get("STET_LOG", "WARNING"), format="stet %(levelname)s %(name)s: %(message)s")
    server = StetServer(db_path)
    register(server)
    tune_for_a_long_run()
    server.start_io()
