"""`make test` and `make soak` split the suite in two (tests/support/tiers.py): every test runs in
exactly one of them, CI runs both, and `make test` keeps a test of every kind."""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

from support.tiers import ALL, FAST, KINDS, is_soak

REPO = Path(__file__).resolve().parents[2]


def recipe(target: str) -> str:
    """The command line of a Makefile target whose recipe is one line."""
    found = re.search(rf"^{target}:.*\n\t(.+)$", (REPO / "Makefile").read_text(), re.M)
    assert found, f"the Makefile has no target {target}"
    return found.group(1)


def test_make_test_and_make_soak_select_complements_of_one_suite():
    fast, soak = recipe("test-python"), recipe("soak")
    assert '-m "not soak"' in fast and "-m soak" in soak
    # Nothing else narrows either: the same command, the same paths, only the marker differs.
    assert fast.replace('-m "not soak"', "-m X") == soak.replace("-m soak", "-m X")
    for narrowing in ("-k ", "--ignore", "--deselect", "tests/"):
        assert narrowing not in fast, f"make test-python narrows the suite with {narrowing}"
    assert re.search(r"^test: .*\btest-python\b.*\btest-vscode-e2e\b", (REPO / "Makefile").read_text(), re.M)


def test_ci_runs_both_tiers():
    lines = (REPO / ".ci" / "run").read_text().splitlines()
    assert "make test" in lines and "make soak" in lines


@functools.cache
def functions_of(path: Path) -> dict[str, bool]:
    """The test functions of a module, each with whether it is marked `soak` in its module."""
    tree = ast.parse(path.read_text())
    module_soak = any(
        isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets)
        and "soak" in ast.unparse(node.value)
        for node in tree.body
    )
    return {
        node.name: module_soak or any("mark.soak" in ast.unparse(d) for d in node.decorator_list)
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test")
    }


def test_every_test_named_fast_exists():
    missing = [
        f"{module}::{name}"
        for module, names in FAST.items()
        for name in names
        if not (REPO / module).is_file() or (name != ALL and name not in functions_of(REPO / module))
    ]
    assert not missing, f"tests/support/tiers.py names tests that do not exist: {missing}"


def fast_tests(module: str) -> list[str]:
    return [
        name for name, marked in functions_of(REPO / module).items() if not marked and not is_soak(f"{module}::{name}")
    ]


def test_make_test_keeps_a_test_of_every_kind():
    empty = [kind for kind, modules in KINDS.items() if not any(fast_tests(m) for m in modules)]
    assert not empty, f"make test runs no test of: {empty}"
    assert all(fast_tests(str(p.relative_to(REPO))) for p in (REPO / "tests" / "unit").glob("test_*.py"))


def test_the_long_runs_are_soak():
    for module in ("tests/crash/test_torture.py", "tests/e2e/test_fuzz.py", "tests/e2e/test_load.py"):
        assert not fast_tests(module), f"{module} is in make test"


def test_a_test_is_soak_by_its_module_and_name_whatever_its_parameters():
    assert not is_soak("tests/unit/test_domain_status.py::test_anything[x]")
    assert not is_soak("tests/e2e/test_smoke.py::test_propose_accept_reject_restart")
    assert not is_soak("tests/e2e/test_postgres.py::test_passwords_are_masked_in_every_message[postgresql]")
    assert is_soak("tests/e2e/test_postgres.py::test_two_developers_decide_the_same_hunk_from_two_checkouts")
    assert is_soak("tests/crash/test_torture.py::test_crash_torture_keeps_the_contract")


def test_tests_and_docs_cite_no_issue_numbers():
    """A newcomer cannot look up "issue 12, case 3": tests, docs and the server's comments say the
    feature instead."""
    here = Path(__file__).resolve()
    files = [REPO / "README.md", *(REPO / "docs").glob("*.md")]
    files += [p for top in ("tests", "server", "benchmarks") for p in (REPO / top).rglob("*.py") if p != here]
    cited = [
        f"{p.relative_to(REPO)}: {m.group(0)}"
        for p in files
        for m in re.finditer(r"\b[Ii]ssues? #?\d+", p.read_text(errors="replace"))
    ]
    assert not cited, "\n".join(cited)
