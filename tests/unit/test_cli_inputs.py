"""cli/inputs.py: which names of a `propose` command line are its input (the thin client reads
those itself: an input it missed would be declined by the resident, so a miss is slow, not wrong),
and which names mean the caller's own descriptors."""

from __future__ import annotations

import pytest

from stet.cli import inputs


@pytest.mark.parametrize(
    ("argv", "names"),
    [
        (["propose", "--patch", "p.diff"], ["p.diff"]),
        (["propose", "--patch=p.diff", "--id", "x"], ["p.diff"]),
        (["propose", "--edit", "-"], ["-"]),
        (["propose", "--pa", "p.diff"], ["p.diff"]),  # argparse takes a unique prefix
        (["propose", "--e=e.json"], ["e.json"]),
        (["--db", "x.db", "propose", "-m", "-", "--patch", "/dev/fd/63"], ["/dev/fd/63"]),
        (["propose", "--id", "patch", "--edit=e"], ["e"]),  # a value that reads "patch" is a value
        (["propose", "--patch", "a", "--patch", "b"], ["a", "b"]),  # (the last counts; both are read)
        (["propose", "--patch"], []),
        (["propose", "--", "--patch", "p"], []),
    ],
)
def test_names(argv, names):
    assert inputs.names(argv) == names


def test_own_descriptors():
    for name in ("/dev/stdin", "/dev/fd/0", "/dev/fd/63", "/proc/self/fd/3", "/proc/thread-self/fd/9"):
        assert inputs.own_descriptor(name), name
    for name in ("/dev/zero", "/dev/fd/", "/dev/fd/x", "/proc/1/fd/0", "p.diff", "-"):
        assert not inputs.own_descriptor(name), name
