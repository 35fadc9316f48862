"""How hunks and decisions look at the doors: the one place a domain value becomes an answer.

`hunk_json` is the HunkState of docs/protocol.md (the same JSON for the editor, MCP and
`stet ... --json`), `ranges` a hunk's place as LSP counts it (UTF-16 columns), `decision` what a
decision did, `proposal` what a proposal, a capture or a snapshot made, `restored` what a recovery
found, `task_json` a task, what a task write recorded and a task's context, `who` who decided a
hunk and who proposed it in the words people read. The domain knows none
of these names, and only the doors import this package (pyproject.toml: the review does not present).
"""
