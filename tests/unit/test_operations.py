"""The operations table says what the doors offer, and is the only list of commands: the CLI's
parser and dispatch, the resident's routing, the LSP's requests, commands and mutations and the
MCP tools are read from it. The one converter of Stet's LSP params turns malformed JSON into
InvalidParams naming the member."""

import argparse
import asyncio
import importlib

import pytest

from stet.domain.status import Decide, Status
from stet.errors import InvalidParams
from stet.lsp.params import (
    ListHunks,
    OnAll,
    OnHunks,
    OnHunksNoText,
    Reapply,
    TaskContextQuery,
    command,
    request,
)
from stet.operations import CLI, DECISIONS, OPERATIONS, offered_by


def test_every_door_offers_what_the_table_says():
    from stet.cli.parser import COMMANDS
    from stet.lsp.handlers import register
    from stet.lsp.server import StetServer
    from stet.mcp.server import build

    assert {op.cli for op in offered_by("cli")} <= set(COMMANDS)
    tools = asyncio.run(build("/nonexistent/stet.db", ["/nonexistent"]).list_tools())
    assert [t.name for t in tools] == [op.mcp for op in offered_by("mcp")]
    server = StetServer()
    register(server)
    assert {op.lsp for op in offered_by("lsp")} <= set(server.protocol.fm.features)
    commands = {d.lsp_command(scope) for d in DECISIONS for scope in d.scopes}
    assert commands == set(server.protocol.fm.commands)


def test_the_cli_is_the_tables_rows():
    from stet.cli.parser import COMMANDS, build_parser

    (sub,) = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    assert list(sub.choices) == COMMANDS == list(CLI) == [op.cli for op in offered_by("cli")]
    for name, op in CLI.items():
        for where in (op.cli_run, op.cli_args):
            module, _, function = where.rpartition(".")
            assert callable(getattr(importlib.import_module(f"stet.cli.{module}"), function)), (name, where)
        assert list(build_parser(name)._actions[-1].choices) == [name], "a command's parser alone"


def test_the_resident_routes_what_the_table_says():
    from stet.resident.place import ROUTED

    assert ROUTED == {op.cli for op in OPERATIONS if op.resident}
    assert all(op.cli for op in OPERATIONS if op.resident), "only a `stet` subcommand goes to the resident"
    assert {d.action for d in DECISIONS} <= ROUTED, "every decision kind, as the table makes it"


def test_the_lsp_mutations_are_the_tables():
    from lsprotocol import types

    from stet.lsp.protocol import MUTATIONS

    assert MUTATIONS == {"stet/propose", types.WORKSPACE_EXECUTE_COMMAND}
    assert MUTATIONS == {op.lsp for op in offered_by("lsp") if op.mutating} | {types.WORKSPACE_EXECUTE_COMMAND}
    assert all(op.mutating for op in OPERATIONS if op.decision), "a command is a decision: it changes the review"


def test_decision_kinds_are_the_domains():
    # `pull` is a command of its own: a reapply of what can land in this checkout.
    assert {Decide(d.action) for d in DECISIONS} == set(Decide) - {Decide.PULL}
    assert [op.decision for op in OPERATIONS if op.decision] == list(DECISIONS)


def test_params_are_typed():
    p = command(OnHunks, [{"hunkIds": ["h1"], "expectedVersions": {"h1": 2}, "text": "x"}], "stet.accept")
    assert (p.hunk_ids, p.expected, p.text, p.request_id, p.feedback) == (["h1"], {"h1": 2}, "x", None, None)
    q = request(ListHunks, {"status": "pending", "uri": "file:///a"}, "stet/listHunks")
    assert (q.statuses, q.uri, q.task_id) == ({Status.PENDING}, "file:///a", None)
    assert request(TaskContextQuery, {"taskId": "t", "markdown": "yes"}, "x").markdown is False
    assert command(OnAll, [{}], "stet.acceptAll").proposal_id is None


@pytest.mark.parametrize(
    ("model", "args", "message"),
    [
        (OnHunks, [], "stet.x takes one argument: a params object"),
        (OnHunks, [{"hunkIds": []}], "`hunkIds` must be a non-empty list of hunk id strings"),
        (OnHunks, [{"hunkIds": ["h"], "requestId": 3}], "`requestId` must be a string"),
        (OnHunks, [{"hunkIds": ["h"], "expectedVersions": {"h": True}}], "`expectedVersions` must map"),
        (OnHunksNoText, [{"hunkIds": [], "text": "t"}], "`text` is only for stet.accept"),
        (Reapply, [{"hunkIds": ["h"], "feedback": 1}], "`feedback` must be a string"),
    ],
)
def test_malformed_params_are_invalid_params(model, args, message):
    with pytest.raises(InvalidParams, match=message.replace("(", r"\(")):
        command(model, args, "stet.x")


def test_a_request_needs_an_object_and_known_statuses():
    with pytest.raises(InvalidParams, match="stet/listHunks: params must be an object"):
        request(ListHunks, [], "stet/listHunks")
    with pytest.raises(InvalidParams, match="`status` values must be among"):
        request(ListHunks, {"status": ["bogus"]}, "stet/listHunks")
