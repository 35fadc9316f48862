"""One run of a `stet` command: its command line, folder, environment, streams and request id.

A command reads these from its call, never from the process: its paths are resolved against
`cwd`, its settings read from `env`, its output written to `stdout` / `stderr`. So the CLI's own
process (`Call.of_process`), the resident answering a thin client (resident/server.py) and the
tests run a command the same way, and calls that only read can run side by side in one event
loop (tests/support/calls.py).

Light: the CLI's start imports it (a plain class with slots: `dataclasses` loads `inspect`)."""

import os
import sys

TYPE_CHECKING = False  # no `typing` at the CLI's start
if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Mapping
    from typing import BinaryIO, TextIO

    from ..review import Review

    # (database, roots, call) of a command -> the resident's review, up to date (what may lag
    # is said on the call's stderr); raises hosting.NotHere when the command's store is not the
    # resident's.
    Host = Callable[[str, list[str], "Call"], Awaitable[Review]]


class Call:
    """A command's run. `stdin` is a binary stream (None: the caller has none); `inputs` is what
    the caller's process read for it (cli/inputs.py: a resident never opens a caller's files or
    pipes), by the name the command line gives ('-': stdin); `umask` is the caller's when the
    process is not its own (workspace/modes.py); `host` gives the review a resident keeps open
    (resident/server.py), None in a process of the command's own. stdout or stderr is None when the
    shell closed it (`stet status >&-`): what is written to it goes nowhere."""

    __slots__ = ("argv", "cwd", "env", "stdin", "stdout", "stderr", "request_id", "inputs", "umask", "host")

    def __init__(
        self,
        argv: "list[str]",
        *,
        cwd: str,
        env: "Mapping[str, str]",
        stdin: "BinaryIO | None",
        stdout: "TextIO | None",
        stderr: "TextIO | None",
        request_id: "str | None" = None,
        inputs: "dict[str, bytes | Exception] | None" = None,
        umask: "int | None" = None,
        host: "Host | None" = None,
    ) -> None:
        self.argv, self.cwd, self.env, self.request_id = argv, cwd, env, request_id
        self.stdin, self.stdout, self.stderr = stdin, stdout, stderr
        self.inputs = {} if inputs is None else inputs
        self.umask, self.host = umask, host

    @classmethod
    def of_process(
        cls,
        argv: "list[str] | None" = None,
        request_id: "str | None" = None,
        inputs: "dict[str, bytes | Exception] | None" = None,
        stdin: "BinaryIO | None" = None,
    ) -> "Call":
        """This process's call: its argv (or `argv`), folder, environment and stdio. `cwd` is ""
        when the folder was deleted under the shell (the command says so)."""
        try:
            cwd = os.getcwd()
        except FileNotFoundError:
            cwd = ""
        if stdin is None and sys.stdin is not None:
            stdin = getattr(sys.stdin, "buffer", None)
        return cls(
            sys.argv[1:] if argv is None else argv,
            cwd=cwd,
            env=os.environ,
            stdin=stdin,
            stdout=sys.stdout,
            stderr=sys.stderr,
            request_id=request_id,
            inputs=inputs,
        )

    def at(self, cwd: str) -> "Call":
        """The same call in the folder `cwd` (a hook's session folder)."""
        return Call(
            self.argv,
            cwd=cwd,
            env=self.env,
            stdin=self.stdin,
            stdout=self.stdout,
            stderr=self.stderr,
            request_id=self.request_id,
            inputs=self.inputs,
            umask=self.umask,
            host=self.host,
        )

    def path(self, name: str) -> str:
        """The absolute path `name` means to the caller (relative to its folder)."""
        return os.path.normpath(os.path.join(self.cwd, name))

    def out(self, text: str) -> None:
        """A line of the command's output."""
        if self.stdout is not None:
            print(text, file=self.stdout)

    def say(self, text: str) -> None:
        """A line on the command's stderr."""
        if self.stderr is not None:
            print(text, file=self.stderr)
