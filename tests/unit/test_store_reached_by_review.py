"""Only the review opens store transactions: the rooms above it (agents, the front ends, the
background work, the resident) say what they want of a review collaborator, which opens the
transaction (pyproject's contract "Only the review reaches the store" forbids their importing
stet.store; this test catches a transaction opened through `review.require_store()` all the same)."""

from __future__ import annotations

import ast
from pathlib import Path

SERVER = Path(__file__).resolve().parents[2] / "server" / "stet"
ALLOWED = {"review", "store"}


def transactions(source: str) -> list[int]:
    """The lines of `source` that open a transaction: `async with <anything>.write(...)` / `.read()`."""
    return sorted(
        n.lineno
        for n in ast.walk(ast.parse(source))
        if isinstance(n, ast.AsyncWith)
        for item in n.items
        if isinstance(call := item.context_expr, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr in ("write", "read")
    )


def test_only_the_review_and_the_store_open_transactions():
    found = [
        f"{path.relative_to(SERVER)}:{line}"
        for path in sorted(SERVER.rglob("*.py"))
        if path.relative_to(SERVER).parts[0] not in ALLOWED
        for line in transactions(path.read_text())
    ]
    assert found == [], "open it in a review collaborator (review/task_records.py, telling.py...): " + ", ".join(found)


def test_a_transaction_opened_through_the_review_is_seen():
    code = "async def f(review):\n    async with review.require_store().write() as tx:\n        pass\n"
    assert transactions(code) == [2]
    assert transactions("async def f(r):\n    async with r.records.reading() as t:\n        pass\n") == []
