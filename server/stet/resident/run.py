"""`stet run -- CMD` (in place) from the thin client: the resident takes the baseline
(`run --phase begin`), this process starts the agent itself - so the agent has the terminal
(stdin, stdout, stderr, the foreground process group: Ctrl-C reaches it) and starts after
Python's own start and one call, not after the review's imports - and the resident captures
what it wrote (`run --phase finish --code N`). Both halves are the command's own code
(cli/capture.py `cmd_run`, agents/run.py `Run.begin` and `Run.finish`).

Where no resident takes `begin`, the whole run is done in this process as it always was. Where
none takes `finish` (it died while the agent worked, or declined), `finish` is done here: the
baseline `begin` took is in the store, where any process finds it.

Light like the client: os, sys and `_signal` (`import signal` would load enum)."""

from __future__ import annotations

import _signal
import os
import sys

from . import place
from .ask import START, NotTaken, Refused, ask, deliver, start_resident

BEGUN = b"stet-run-begun"  # cli/capture.py BEGUN: the first field of `begin`'s answer
FORWARDED = (_signal.SIGTERM, _signal.SIGHUP)


# `stet run`'s options as its parser declares them (cli/capture.py add_run, and the --db /
# --root every command takes; a unit test holds the two equal): option -> whether it takes a value.
OPTIONS = {
    "-h": False,
    "--help": False,
    "--db": True,
    "--root": True,
    "--task": True,
    "--message": True,
    "-m": True,
    "--agent": True,
    "--keep": False,
    "--worktree": False,
    "--phase": True,
    "--code": True,
}
# Those that keep a run off this path: a run in a worktree, a half of one already, help.
OWN = {"--worktree", "--phase", "--code", "-h", "--help"}


def takes(argv: list[str]) -> bool:
    """Whether a `stet run` call is one this path takes: in place (none of OWN among the options
    before `--`, read as the command's parser reads them), nothing but the agent after `--`."""
    at = next((n for n, a in enumerate(argv) if not a.startswith("-")), None)
    if at is None or argv[at] != "run" or "--" not in argv[at + 1 :]:
        return False
    try:
        return not options(argv[at + 1 : argv.index("--", at + 1)]) & OWN
    except Unread:  # the command, in its own process, says what is wrong
        return False


class Unread(ValueError):
    """Options the parser refuses (unknown, ambiguous, a value missing or one too many)."""


def options(args: list[str]) -> set[str]:
    """The options `args` give, read as argparse reads them for `stet run`: a long option by a
    unique prefix, a value after `=`, a short option's value attached (-mTEXT), else the next
    argument; up to the first positional argument (the agent's command: argparse.REMAINDER
    takes it and the rest). Raises Unread where argparse would refuse them."""
    found: set[str] = set()
    i = 0
    while i < len(args) and (read := _option(args[i])) is not None:
        name, value = read
        found.add(name)
        if OPTIONS[name] and value is None:
            i += 1
            if i == len(args) or _option(args[i]) is not None:
                raise Unread(f"{name} takes a value")
        elif not OPTIONS[name] and value is not None:
            raise Unread(f"{name} takes no value")
        i += 1
    return found


def _option(arg: str) -> tuple[str, str | None] | None:
    """(the option `arg` names, the value it carries) as argparse's _parse_optional reads it;
    None for a positional argument."""
    if not arg.startswith("-") or arg == "-":
        return None
    name, eq, value = arg.partition("=")
    if arg in OPTIONS or eq and name in OPTIONS:
        return name, value if eq else None
    if arg.startswith("--"):
        named = [(o, value if eq else None) for o in OPTIONS if o.startswith(name)]
    else:  # -mTEXT; or a prefix of a single-dash option
        named = [(o, arg[2:]) if o == arg[:2] else (o, None) for o in OPTIONS if o == arg[:2] or o.startswith(arg)]
    if len(named) == 1:
        return named[0]
    if not named and (" " in arg or _negative(arg)):  # argparse takes these as positionals
        return None
    raise Unread(f"{arg}: {'ambiguous' if named else 'unknown'}")


def _negative(arg: str) -> bool:
    """A negative number, as argparse's `^-\\d+$|^-\\d*\\.\\d+$` says (no `re` here)."""
    whole, dot, part = arg[1:].partition(".")
    return (whole.isdecimal() and not dot) or (dot != "" and (whole == "" or whole.isdecimal()) and part.isdecimal())


def home(argv: list[str]) -> str | None:
    """The `.stet` folder whose resident takes the call, as for every routed call (None: none)."""
    try:
        return place.home_of_call(argv, os.getcwd(), os.environ)
    except OSError:  # the current folder deleted under the shell: the command says so
        return None


class _Stop:
    """SIGTERM and SIGHUP for the whole run, as agents/run.py's Agent handles them: one before
    the agent starts means it does not start; one while it runs is passed on to it; one after
    it ended lets the capture finish."""

    def __init__(self) -> None:
        self.sig = 0
        self.pid = 0
        self.previous = {sig: _signal.signal(sig, self) for sig in FORWARDED}

    def __call__(self, sig: int, _frame: object = None) -> None:
        self.sig = self.sig or sig
        if self.pid:
            try:
                os.kill(self.pid, sig)
            except OSError:
                pass

    def restore(self) -> None:
        for sig, handler in self.previous.items():
            _signal.signal(sig, handler)


def run(argv: list[str], home: str) -> int:
    """The exit code of `stet run`: the agent's, else 1 when a file was refused."""
    stop = _Stop()
    try:
        began = _begin(argv, home)
        if isinstance(began, int):
            return began
        if began is None:
            if stop.sig:
                _say("stopped before the agent started")
                return 128 + stop.sig
            stop.restore()
            return _here(argv)
        task, agent_argv = began
        code = _agent(agent_argv, task, stop)
        return _finish(argv, home, code)
    except KeyboardInterrupt:
        return 130
    finally:
        stop.restore()


def _begin(argv: list[str], home: str) -> tuple[str, list[str]] | int | None:
    """(the task, the agent's command line) once the resident took the baseline; an exit code
    when the call ends there (bad usage, help); None when this process must do the whole run."""
    answer = _call(home, _phased(argv, "begin"))
    if answer is None:
        return None
    code, out, err = answer
    if code != 0 or not out.startswith(BEGUN + b"\0"):
        return deliver(code, out, err)
    deliver(0, b"", err)  # what the resident did first (an interrupted run's capture)
    fields = [os.fsdecode(f) for f in out.split(b"\0")[1:]]
    return fields[0], fields[1:]


def _finish(argv: list[str], home: str, code: int) -> int:
    phased = _phased(argv, "finish", "--code", str(code))
    answer = _call(home, phased)
    if answer is not None:
        return deliver(*answer)
    return _here(phased)


def _call(home: str, argv: list[str]) -> tuple[int, bytes, bytes] | None:
    """The resident's answer to one half; None when this process must do it (none answers, it
    died mid-call, or declined; a resident is started for the next call where it should be)."""
    try:
        answer = ask(home, argv, os.urandom(12).hex(), b"", {})
    except Refused as exc:
        print(f"stet: {exc} (the call runs without the resident)", file=sys.stderr)
        return None
    except NotTaken:  # busy or wedged: this process does it
        _say(f"the resident did not start the call within {START:g} s: it runs in this process")
        return None
    except OSError:  # none there, a stale socket, or it died mid-call
        answer = "start"
    if isinstance(answer, tuple):
        return answer
    if answer == "start":
        start_resident(place.store_options(argv))
    return None


def _phased(argv: list[str], *phase: str) -> list[str]:
    at = argv.index("run")
    return [*argv[: at + 1], "--phase", *phase, *argv[at + 1 :]]


def _agent(argv: list[str], task: str, stop: _Stop) -> int:
    """Run the agent in this folder with this process's terminal; its exit code (as a shell
    says it: 128 + N when killed by signal N; 127 not found, 126 not runnable)."""
    env = {k: v for k, v in os.environ.items() if k != "STET_FAULT"}
    env["PWD"] = os.getcwd()  # shells and tools that trust PWD see where they are
    if task:
        env["STET_TASK"] = task
    if stop.sig:
        _say("stopped before the agent started")
        return 128 + stop.sig
    sigint = _signal.getsignal(_signal.SIGINT)
    # What Python set for itself is not the agent's: SIGPIPE and SIGXFSZ ignored (subprocess
    # restores them too), SIGINT ignored here while the agent runs (Ctrl-C is the agent's).
    default = [_signal.SIGPIPE, _signal.SIGXFSZ] + ([_signal.SIGINT] if sigint != _signal.SIG_IGN else [])
    _signal.signal(_signal.SIGINT, _signal.SIG_IGN)
    try:
        try:
            stop.pid = os.posix_spawnp(argv[0], argv, env, setsigdef=default)
        except FileNotFoundError:
            _say(f"{argv[0]}: command not found")
            return 127
        except OSError as exc:  # permission denied, not an executable
            _say(f"{argv[0]}: {(exc.strerror or str(exc)).lower()}")
            return 126
        if stop.sig:  # came while it was being started
            os.kill(stop.pid, stop.sig)
        _, status = os.waitpid(stop.pid, 0)
        stop.pid = 0
    finally:
        _signal.signal(_signal.SIGINT, sigint)
    code = os.waitstatus_to_exitcode(status)
    return code if code >= 0 else 128 - code  # killed by a signal: as a shell reports it


def _here(argv: list[str]) -> int:
    from ..cli.main import main

    return main(argv, None)


def _say(text: str) -> None:
    print(f"stet: {text}", file=sys.stderr, flush=True)
