"""Every command Stet offers, through every door, in one table: its name, which doors offer it
(an LSP request, an MCP tool, a `stet` subcommand), whether it changes the review, and whether
the thin client hands it to the workspace's resident process. The CLI's parser and dispatch,
the resident's routing, the LSP's requests, commands and mutations and MCP's tools are read
from it; each door's module only parses, calls and presents.

A new decision kind is a row of DECISIONS (plus its rule in domain/status and review/deciding).
The thin client reads this module at every call: it imports nothing, not even `typing`
(the typed params of the LSP door are lsp/params.py's).
"""


class Decision:
    """A decision kind (`action`: a domain.status.Decide value). Over LSP it is the command
    `stet.<action>` on hunk ids, plus `stet.<action>File` / `stet.<action>All` /
    `stet.<action>Lines` for the other scopes it offers; in the CLI, `stet <action>` with hunk
    ids (and --file / --proposal / --task, and --old / --new for some lines of one hunk, when
    it has those scopes)."""

    def __init__(
        self,
        action: str,
        help: str,  # the CLI's help and description
        scopes: tuple[str, ...] = ("hunks",),
        with_text: bool = False,  # takes the developer's own `text` for the hunk
        journal_only: bool = False,  # takes no versions or feedback: it only puts back what was decided
    ) -> None:
        self.action, self.help, self.scopes = action, help, scopes
        self.with_text, self.journal_only = with_text, journal_only

    def lsp_command(self, scope: str) -> str:
        return f"stet.{self.action}" + {"hunks": "", "file": "File", "all": "All", "lines": "Lines"}[scope]


DECISIONS = (
    Decision(
        "accept",
        "accept hunks (or some lines of one: --old/--new): the edit is written into the file, exactly once",
        ("hunks", "file", "all", "lines"),
        True,
    ),
    Decision(
        "reject",
        "reject hunks (or some lines of one: --old/--new), optionally saying why (--feedback)",
        ("hunks", "file", "all", "lines"),
    ),
    Decision("undo", "back to pending; an applied hunk's edit is reverted (if it is gone already, nothing is)"),
    Decision(
        "reapply",
        "put back applied hunks whose text was removed from the file since, where the old text still is",
        journal_only=True,
    ),
)


class Operation:
    """One command and the doors that offer it.

    `lsp`: an LSP request method (decisions are LSP commands: see DECISIONS); `mcp`: an MCP
    tool, a method of mcp/server.Tools; `cli`: a `stet` subcommand, with `cli_run` (the
    function of the parsed arguments that runs it, "module.function" in stet.cli: it returns
    the exit code, or a coroutine giving it) and `cli_args` (the function that adds its parser,
    called with the subparsers, parser.Parents and this row). `mutating`: it changes the review
    (an LSP request that does is committed before its answer and never answered as cancelled).
    `resident`: the thin client hands the call to the workspace's resident process - what
    agents and hooks run often; what holds a terminal, runs long or repairs runs in its own
    process (`run`'s agent too: resident/run.py has the resident do the two halves around it).
    `needs_cwd`: refused when the current folder is gone (all but what needs no workspace)."""

    def __init__(
        self,
        name: str,
        lsp: str | None = None,
        mcp: str | None = None,
        cli: str | None = None,
        cli_run: str = "",
        cli_args: str = "",
        mutating: bool = False,
        resident: bool = False,
        needs_cwd: bool = True,
        decision: Decision | None = None,
    ) -> None:
        self.name, self.lsp, self.mcp, self.cli = name, lsp, mcp, cli
        self.cli_run, self.cli_args = cli_run, cli_args
        self.mutating, self.resident, self.needs_cwd, self.decision = mutating, resident, needs_cwd, decision


def _cli(
    name: str,
    run: str,
    args: str = "",
    lsp: str | None = None,
    mutating: bool = False,
    resident: bool = False,
    needs_cwd: bool = True,
    decision: Decision | None = None,
) -> Operation:
    """A row whose `stet` subcommand has its name; its parser is added by parser.add_<name>
    unless `args` says another."""
    return Operation(
        name,
        lsp=lsp,
        cli=name,
        cli_run=run,
        cli_args=args or f"parser.add_{name}",
        mutating=mutating,
        resident=resident,
        needs_cwd=needs_cwd,
        decision=decision,
    )


# In the order `stet --help` lists the subcommands and MCP lists its tools.
OPERATIONS = (
    _cli("serve", "main.cmd_serve", needs_cwd=False),
    _cli("demo", "main.cmd_demo", needs_cwd=False),
    _cli("propose", "review.cmd_propose", lsp="stet/propose", mutating=True, resident=True),
    Operation(
        "list_hunks",
        lsp="stet/listHunks",
        cli="status",
        cli_run="review.cmd_status",
        cli_args="parser.add_status",
        resident=True,
    ),
    Operation("proposal", lsp="stet/proposal"),
    _cli("show", "review.cmd_show", resident=True),
    _cli("log", "review.cmd_log", resident=True),
    *(
        _cli(d.action, "review.cmd_decide", "parser.add_decision", mutating=True, resident=True, decision=d)
        for d in DECISIONS
    ),
    _cli("pull", "review.cmd_pull", mutating=True, resident=True),
    _cli("export", "review.cmd_export"),
    _cli("doctor", "doctor.cmd_doctor"),
    _cli("init", "watch.cmd_init"),
    _cli("watch", "watch.cmd_watch", mutating=True),
    Operation(
        "start_task",
        mcp="start_task",
        cli="task",
        cli_run="tasks.cmd_task",
        cli_args="tasks.add_task",
        mutating=True,
        resident=True,
    ),
    Operation("list_tasks", mcp="list_tasks"),
    Operation(
        "task_context",
        lsp="stet/taskContext",
        mcp="get_task_context",
        cli="resume",
        cli_run="tasks.cmd_resume",
        cli_args="tasks.add_resume",
        resident=True,
    ),
    Operation("record_step", mcp="record_step", mutating=True),
    Operation("record_note", mcp="record_note", mutating=True),
    Operation("record_files_read", mcp="record_files_read", mutating=True),
    Operation("propose_edits", mcp="propose_edits", mutating=True),
    Operation("propose_patch", mcp="propose_patch", mutating=True),
    Operation("review_status", mcp="review_status"),
    Operation("wait_for_decisions", mcp="wait_for_decisions"),
    Operation("finish_task", mcp="finish_task", mutating=True),
    _cli("mcp", "main.run_mcp", "tasks.add_mcp"),
    _cli("capture", "capture.cmd_capture", "capture.add_capture", mutating=True),
    _cli("snapshot", "capture.cmd_snapshot", "capture.add_snapshot", mutating=True),
    _cli("run", "capture.cmd_run", "capture.add_run", mutating=True),
    _cli("integrate", "integrate.cmd_integrate", "integrate.add_integrate"),
    _cli("hook", "integrate.cmd_hook", "integrate.add_hook", mutating=True, resident=True),
    _cli("acp", "acp.cmd_acp", "acp.add_acp", mutating=True),
)

# subcommand -> its row, in the table's order
CLI = {op.cli: op for op in OPERATIONS if op.cli is not None}


def offered_by(door: str) -> list[Operation]:
    """The operations a door ("lsp", "mcp" or "cli") offers, in the table's order (the order
    MCP lists its tools in)."""
    return [op for op in OPERATIONS if getattr(op, door) is not None]
