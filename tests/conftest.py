import os

import pytest
from hypothesis import settings

from support.engines import ENGINES, Databases, Engine, cluster
from support.harness import Session, write
from support.leftovers import ours, remove
from support.tiers import is_soak

# Property tests judge correctness, not speed: on a loaded 2-core machine a per-example
# deadline only produces flaky failures. Speed is measured in benchmarks/.
settings.register_profile("stet", deadline=None)
settings.load_profile("stet")

# `stet` hands calls to a resident process it starts (stet/resident/): the tests of that path
# turn it on themselves (tests/e2e/test_resident.py, the torture's thin-client run); the rest
# run each command in its own process, as they were written to, and leave no process behind.
os.environ.setdefault("STET_RESIDENT", "off")


def pytest_collection_modifyitems(items):
    """End-to-end and crash tests outside support/tiers.py's FAST are marked `soak`: `make soak`
    runs them, `make test` the rest."""
    for item in items:
        if is_soak(item.nodeid):
            item.add_marker(pytest.mark.soak)


@pytest.fixture
def ws(tmp_path):
    """A workspace folder with a few files."""
    root = tmp_path / "ws"
    root.mkdir()
    write(root / "a.py", "".join(f"line {i}\n" for i in range(1, 11)))
    write(root / "b.txt", "alpha\nbeta\ngamma\n")
    return root


@pytest.fixture
async def session(ws):
    s = Session(ws)
    await s.start()
    yield s
    if s.client is not None and s.client._server.returncode is None:
        await s.stop()


LEFT: dict[str, list[str]] = {}


@pytest.fixture(autouse=True)
def _no_worktree_left(request, tmp_path_factory):
    """A test that keeps a `stet run --worktree` worktree removes it (as the user is told to);
    one left anyway is removed here and named in the summary, so the suite leaves none."""
    yield
    left = ours(tmp_path_factory.getbasetemp())
    for folder, common in left:
        remove(folder, common)
    if left:
        LEFT[request.node.nodeid] = [str(f) for f, _ in left]


def pytest_terminal_summary(terminalreporter):
    from support.figures import FIGURES

    if LEFT:
        terminalreporter.section("stet-run worktrees left by tests (removed)")
        for name, paths in LEFT.items():
            terminalreporter.write_line(f"{name}: {', '.join(paths)}")

    if FIGURES:
        terminalreporter.section("reliability figures")
        for name, line in FIGURES.items():
            terminalreporter.write_line(f"{name}: {line}")


@pytest.fixture(params=ENGINES)
def engine(request):
    """Each store engine in turn (see support/engines.py): a contract test takes `engine` and
    puts its store at `engine.db(root)`."""
    if request.param == "sqlite":
        yield Engine("sqlite", None)
        return
    databases = Databases(cluster())
    try:
        yield Engine("postgresql", databases)
    finally:
        databases.drop()
