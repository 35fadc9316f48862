"""Which `stet run` calls the thin client runs in place through the resident (resident/run.py
`takes`): decided by the options as the command's parser reads them, not by how they begin."""

import argparse

import pytest

from stet.resident import run


def run_parser() -> argparse.ArgumentParser:
    from stet.cli.parser import build_parser

    (sub,) = [a for a in build_parser("run")._actions if isinstance(a, argparse._SubParsersAction)]
    return sub.choices["run"]


def test_the_thin_client_knows_runs_options_as_its_parser_declares_them():
    declared = {s: a.nargs != 0 for a in run_parser()._actions for s in a.option_strings}
    assert run.OPTIONS == declared


@pytest.mark.parametrize(
    ("args", "taken"),
    [
        (["--", "agent"], True),
        (["--task", "t", "-m", "fix it", "--keep", "--agent", "a", "--", "agent", "--worktree"], True),
        (["--db", "x.db", "--root=.", "--ta", "t", "-mfix", "--", "agent"], True),
        (["--worktree", "--", "agent"], False),
        (["--w", "--", "agent"], False),  # argparse takes a unique prefix: --worktree
        (["--phase", "begin", "--", "agent"], False),
        (["--code", "3", "--", "agent"], False),
        (["--he", "--", "agent"], False),
        (["-h"], False),
        (["--bogus", "--", "agent"], False),  # refused: said by the command in its own process
        (["--task", "--", "agent"], False),  # a value missing
        (["--keep=yes", "--", "agent"], False),
        # Values that merely begin like --worktree, --phase or --code are values.
        (["-m", "--please fix the tests", "--", "agent"], True),
        (["--message=--worktree", "--task", "--c x", "--", "agent"], True),
        (["--agent", "-1", "--", "agent"], True),
    ],
)
def test_a_run_is_taken_by_its_parsed_options(args, taken):
    assert run.takes(["run", *args]) is taken
    if taken:  # and the parser reads them so: in place, not a half, no help
        parsed = run_parser().parse_args(args)
        assert not parsed.worktree and parsed.phase is None and parsed.code == 0


def test_a_new_option_sharing_a_prefix_does_not_change_where_a_run_goes(monkeypatch):
    monkeypatch.setitem(run.OPTIONS, "--color", False)
    monkeypatch.setitem(run.OPTIONS, "--way", True)
    assert run.takes(["run", "--color", "--way", "x", "--", "agent"])
    assert not run.takes(["run", "--co", "--", "agent"]), "ambiguous now: the parser refuses it"
    assert not run.takes(["run", "--cod", "1", "--", "agent"])
    assert not run.takes(["run", "--wo", "--", "agent"])
