"""A hunk's status changes in one place: `Hunk.move_to`, which checks the transition table.
No module outside the domain assigns a status itself."""

import ast
from pathlib import Path

SERVER = Path(__file__).resolve().parents[2] / "server" / "stet"


def _targets(node: ast.AST) -> list[ast.expr]:
    if isinstance(node, ast.Assign):
        out: list[ast.expr] = []
        for t in node.targets:
            out += t.elts if isinstance(t, ast.Tuple | ast.List) else [t]
        return out
    if isinstance(node, ast.AugAssign | ast.AnnAssign):
        return [node.target]
    return []


class _Finder(ast.NodeVisitor):
    def __init__(self) -> None:
        self.lines: set[int] = set()
        self.function = ""

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        outer, self.function = self.function, node.name
        self.generic_visit(node)
        self.function = outer

    visit_AsyncFunctionDef = visit_FunctionDef

    def generic_visit(self, node: ast.AST) -> None:
        for t in _targets(node):
            if isinstance(t, ast.Attribute) and t.attr == "status":
                # A read-only view filled at its construction is not a transition.
                if not (self.function == "__init__" and isinstance(t.value, ast.Name) and t.value.id == "self"):
                    self.lines.add(node.lineno)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name | ast.Attribute):
            name = node.func.id if isinstance(node.func, ast.Name) else node.func.attr
            by_keyword = any(k.arg == "status" for k in node.keywords)
            by_name = any(isinstance(a, ast.Constant) and a.value == "status" for a in node.args)
            if name in {"setattr", "replace"} and (by_keyword or by_name):
                self.lines.add(node.lineno)
        super().generic_visit(node)


def _assigned_statuses(tree: ast.AST) -> list[int]:
    finder = _Finder()
    finder.visit(tree)
    return sorted(finder.lines)


def test_no_module_outside_the_domain_assigns_a_status():
    found = {}
    for path in sorted(SERVER.rglob("*.py")):
        if "domain" in path.relative_to(SERVER).parts:
            continue
        lines = _assigned_statuses(ast.parse(path.read_text(), str(path)))
        if lines:
            found[str(path.relative_to(SERVER))] = lines
    assert not found, f"a status assigned outside Hunk.move_to: {found}"


def test_the_check_finds_an_assignment():
    assert _assigned_statuses(ast.parse("def f(h):\n    h.status, h.version = 1, 2\n")) == [2]
    assert _assigned_statuses(ast.parse("def f(h):\n    h.status = 1\n")) == [2]
    assert _assigned_statuses(ast.parse("x = replace(h, status=1)\n")) == [1]
    assert _assigned_statuses(ast.parse("setattr(h, 'status', 1)\n")) == [1]
    assert _assigned_statuses(ast.parse("class S:\n    def __init__(self, s):\n        self.status = s\n")) == []
    assert _assigned_statuses(ast.parse("def f(h):\n    h.move_to(1)\n")) == []
