"""The presenters: one place turns a hunk into the answer every door sends, and the domain
names no field of an answer."""

from __future__ import annotations

import ast
import pathlib
import re

from stet.domain.decided import Decided, Split
from stet.domain.model import Hunk, Kind
from stet.domain.status import Status
from stet.present import decision, hunk_json, task_json

SERVER = pathlib.Path(__file__).resolve().parents[2] / "server" / "stet"
# Keys only a HunkState has (a TextEdit has newText, an effect newUri, many answers proposalId).
HUNK_STATE_ONLY = {"inFile", "oldText", "decidedAt", "appliedText", "messageTruncated"}


def built_keys(path: pathlib.Path) -> list[tuple[int, str]]:
    """The string keys a module writes: in dict literals and `x["key"] = ...`."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Dict):
            out += [
                (node.lineno, k.value) for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)
            ]
        elif (
            isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store) and isinstance(node.slice, ast.Constant)
        ):
            out.append((node.lineno, node.slice.value))
    return out


def modules(under: pathlib.Path) -> list[pathlib.Path]:
    return sorted(under.rglob("*.py"))


def test_no_module_outside_present_builds_a_hunk_state():
    built = [
        f"{p.relative_to(SERVER)}:{line} {key}"
        for p in modules(SERVER)
        if "present" not in p.relative_to(SERVER).parts[:1]
        for line, key in built_keys(p)
        if key in HUNK_STATE_ONLY
    ]
    assert not built, "a HunkState is built outside stet/present: " + ", ".join(built)


def test_the_domain_names_no_field_of_an_answer():
    camel = [
        f"{p.relative_to(SERVER)}:{line} {key}"
        for p in modules(SERVER / "domain")
        for line, key in built_keys(p)
        if isinstance(key, str) and re.fullmatch(r"[a-z]+[A-Z]\w*", key)
    ]
    assert not camel, "camelCase keys (the doors' names) in domain/: " + ", ".join(camel)


def hunk(status: Status = Status.APPLIED, **more) -> Hunk:
    return Hunk(
        id="h1",
        proposal_id="p1",
        task_id="t1",
        seq=0,
        uri="file:///w/a.py",
        kind=Kind.EDIT,
        status=status,
        line=2,
        old=("a\n",),
        new=("b\n", "c😀"),
        ctx_before=(),
        ctx_after=(),
        **more,
    )


def test_a_new_field_of_a_hunk_reaches_every_hunk_shape_from_one_function(monkeypatch):
    """Every shape that carries a hunk's state (the editor's and the CLI's lists, MCP's status
    with its path, a task's context) is built from `hunk_json.state`: a field added there is
    in all of them."""
    plain = hunk_json.state

    monkeypatch.setattr(hunk_json, "state", lambda h: {**plain(h), "newField": 1})
    h = hunk()
    assert hunk_json.states([h])[0]["newField"] == 1
    assert hunk_json.located(h, lambda uri: "a.py")["newField"] == 1
    context = task_json.build_context("t1", None, [], [], [], [h], lambda uri: "a.py")
    assert context["hunks"]["completed"][0]["newField"] == 1


def test_the_hunk_state_counts_utf16_and_says_in_file_once():
    h = hunk(shows_new=True)
    state = hunk_json.state(h)
    # "c😀": the emoji is two UTF-16 code units.
    assert state["range"] == {"start": {"line": 2, "character": 0}, "end": {"line": 3, "character": 3}}
    assert state["inFile"] is True and hunk(in_file=False).in_file_state() is False
    assert hunk_json.state(hunk(Status.PENDING))["inFile"] is None
    assert hunk_json.state(hunk(Status.PENDING, kept=True, in_file=False))["inFile"] is False
    assert hunk(Status.PENDING, kept=True).shown_when_loaded() and not hunk(in_file=False).shown_when_loaded()


def test_a_decision_is_a_domain_value_each_door_presents():
    """The review answers what a decision did (hunks, not wire dicts); the answer's shape is
    present/decision.py's: `{hunks}`, plus `notTaken` only when an effect did not take."""
    took = hunk()
    stale = hunk(Status.STALE, problem="pkg is a symlink")
    stale.id = "h2"
    decided = Decided((took, stale))
    assert [(m.hunk.id, m.why) for m in decided.not_taken()] == [("h2", "pkg is a symlink")]
    assert decision.answer(decided) == {
        "hunks": [hunk_json.state(took), hunk_json.state(stale)],
        "notTaken": [{"hunkId": "h2", "status": "stale", "why": "pkg is a symlink"}],
    }
    assert decision.answer(Decided((took,))) == {"hunks": [hunk_json.state(took)]}
    assert decision.split(Split(took, None)) == {"part": hunk_json.state(took), "rest": None}
    assert Split(stale, took).not_taken()[0].hunk is stale
