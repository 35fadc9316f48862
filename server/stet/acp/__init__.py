"""ACP: Stet between an editor (the ACP client) and an agent (the ACP server), on stdio.

- `message`: one line of the stream as read, its parsed body, and what the relay does with it;
- `relay`: the transparent pipe in both directions (the agent's process, order, faults);
- `part`: Stet's part in it: which messages it records, answers or extends;
- `conductor`: the same as a proxy component under ACP's conductor (`stet acp --proxy`).
"""
