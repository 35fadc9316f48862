"""What the thin client and `stet mcp`'s front load before they answer: an agent pays for every
module at each hook and at each session's start (`faults.py` once pulled in asyncio,
and `stet mcp` answered initialize in 4-5x `python -c pass` instead of 2x)."""

from __future__ import annotations

import ast
import subprocess
import sys

SLOW = {"asyncio", "logging", "sqlite3", "pydantic", "mcp", "argparse", "socket", "typing", "dataclasses"}


def loaded(*modules: str) -> set[str]:
    """The top-level packages a fresh interpreter holds after importing `modules`."""
    code = f"import sys; import {', '.join(modules)}; print(repr(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return {m.split(".")[0] for m in ast.literal_eval(out)}


def test_the_thin_client_loads_nothing_slow():
    assert not loaded("stet.resident.client", "stet.faults", "stet.limits") & (SLOW | {"json", "threading"})


def test_the_thin_client_of_a_call_without_input_loads_no_future_import():
    # `from __future__ import annotations` is a module of its own to find and run (0.1-0.2 ms of
    # every status, show and decision): the thin path writes annotations Python evaluates as they are.
    assert "__future__" not in loaded("stet.resident.client")


def test_the_mcp_front_loads_nothing_slow():
    assert not loaded("stet.mcp.stdio") & SLOW


def test_the_operations_table_imports_nothing():
    """The thin client reads it at every call (resident/place.py ROUTED)."""
    assert loaded("stet.operations") - loaded("os") <= {"stet", "__future__"}


def test_the_glance_of_stet_status_loads_no_git_until_a_hunk_is_kept():
    """`stet status` in its own process answers from the glance (review/glance.py): whether HEAD
    moved is asked only when a pending hunk is kept, so git's and the safe writer's modules load
    only then, not at every status."""
    assert not loaded("stet.review.glance") & {"subprocess", "tempfile", "secrets", "threading"}
