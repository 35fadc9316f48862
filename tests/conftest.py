import pytest

from harness import Session, write


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


def pytest_terminal_summary(terminalreporter):
    from figures import FIGURES

    if FIGURES:
        terminalreporter.section("reliability figures")
        for name, line in FIGURES.items():
            terminalreporter.write_line(f"{name}: {line}")
