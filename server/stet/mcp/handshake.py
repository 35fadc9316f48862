"""The answer to an MCP client's `initialize`, made without the MCP SDK.

An agent waits for `stet mcp` to answer `initialize` before its first request, and loading the
SDK takes a second or more on a busy machine (past Claude Code's negotiation timeout once). So
stdio.py answers it from here at once, while the SDK loads, and hands the SDK the same request
afterwards. The answer must be the one the SDK gives: tests/e2e/test_mcp_handshake.py compares
them for every version, and stdio.py logs any difference it sees at run time.

Imports only json and the package's version: it runs before anything heavy is loaded."""

from __future__ import annotations

import json

from .. import __version__

TYPE_CHECKING = False  # no `typing` before the answer: it costs a tenth of `python -c pass`
if TYPE_CHECKING:
    from typing import Any

SERVER_NAME = "stet"

INSTRUCTIONS = """\
Stet puts your edits in front of the developer for review, hunk by hunk, instead of writing files
directly. Work in a task: start_task once (or, when you carry on someone else's work, call
get_task_context first and do what it says). Record what you read (record_files_read), what you
decided and why (record_note), your plan (record_step). Propose changes with propose_edits or
propose_patch: nothing is written until the developer accepts. Check review_status to see what
was accepted, changed or rejected (with the developer's feedback) before proposing more, or
block on wait_for_decisions until the developer has decided a proposal.
Re-sending a change already proposed creates nothing new; a change the developer rejected is
reported back with their feedback instead of being asked again."""

# The revisions that begin with `initialize` (the SDK's HANDSHAKE_PROTOCOL_VERSIONS), oldest first;
# a client asking for another one is offered the newest.
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")

CAPABILITIES = {
    "prompts": {"listChanged": False},
    "resources": {"listChanged": False, "subscribe": False},
    "tools": {"listChanged": False},
}


def result(requested: str) -> dict[str, Any]:
    """The InitializeResult for a client that asked for protocol revision `requested`."""
    version = requested if requested in HANDSHAKE_VERSIONS else HANDSHAKE_VERSIONS[-1]
    return {
        "capabilities": CAPABILITIES,
        "instructions": INSTRUCTIONS,
        "protocolVersion": version,
        "serverInfo": {"name": SERVER_NAME, "version": __version__},
    }


def early_answer(line: bytes) -> tuple[bytes, object] | None:
    """The response line to `line` and its request id, when `line` is a well-formed
    `initialize` request; None for anything else, which the SDK answers itself (its own
    error for malformed params included)."""
    try:
        message = json.loads(line)
    except ValueError:
        return None
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0" or message.get("method") != "initialize":
        return None
    request_id = message.get("id")
    if isinstance(request_id, bool) or not isinstance(request_id, (str, int)):
        return None
    params = message.get("params")
    if not isinstance(params, dict) or not _well_formed(params):
        return None
    answer = {"jsonrpc": "2.0", "id": request_id, "result": result(params["protocolVersion"])}
    return json.dumps(answer, separators=(",", ":"), ensure_ascii=False).encode() + b"\n", request_id


def _well_formed(params: dict[str, Any]) -> bool:
    """The fields the SDK requires of initialize's params, with the types it requires."""
    info = params.get("clientInfo")
    return (
        isinstance(params.get("protocolVersion"), str)
        and isinstance(params.get("capabilities"), dict)
        and isinstance(info, dict)
        and isinstance(info.get("name"), str)
        and isinstance(info.get("version"), str)
    )
