"""No function in server/stet/ is longer than 80 lines: a long function is a
place where several steps hide. No exceptions."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).parents[2] / "server" / "stet"
LIMIT = 80


def _functions(node: ast.AST, prefix: str):
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
            name = f"{prefix}{child.name}"
            yield name, child.end_lineno - child.lineno + 1
            yield from _functions(child, name + ".")
        elif isinstance(child, ast.ClassDef):
            yield from _functions(child, f"{prefix}{child.name}.")


def long_functions() -> dict[str, int]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        module = ".".join(path.relative_to(PACKAGE).with_suffix("").parts)
        for name, length in _functions(ast.parse(path.read_text()), module + "."):
            if length > LIMIT:
                found[name] = length
    return found


def test_no_function_over_80_lines():
    too_long = long_functions()
    assert not too_long, f"functions over {LIMIT} lines: {too_long}"
