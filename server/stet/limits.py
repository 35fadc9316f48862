"""How many bytes one input may carry, the same through every door that reads it: the thin
client (stet/resident/client.py), the commands in their own process or the resident's, the
HTTP hook route. Imports nothing: the thin client reads it at every start."""

from __future__ import annotations

PROPOSAL = 10 << 20  # the texts one proposal makes Stet store (review/config.py, Limits.max_bytes)
# A patch or edit file holds those texts plus context and headers: four times that is generous,
# and /dev/zero or an endless pipe stops there.
PATCH = 4 * PROPOSAL
HOOK = 64 << 20  # one hook event on stdin or in an HTTP body (a Write carries a whole file)
MCP_MESSAGE = PATCH  # one MCP message on `stet mcp`'s stdin (a proposal's texts, JSON-escaped)
