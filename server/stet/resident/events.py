"""Which hook event a `stet hook` call's stdin is, as the command itself will read it
(`json.loads` of its UTF-8, then `hook_event_name`), for the thin client to route it: the
events whose answer is recorded as told once written (TOLD_HERE) run in the caller's own
process, every other event goes to the resident.

Light like the client: `import json` loads `re` and costs more than the resident saves, so the
JSON is parsed by the very scanner `json` uses (`_json`, its C module), and only when it may be
one of those events at all: their names appear in its bytes, as such or behind a `\\u` escape.
A PostToolUse that carries a file mentioning them is parsed (a few milliseconds), never
rerouted."""

from __future__ import annotations

TYPE_CHECKING = False  # no `typing` in the thin client
if TYPE_CHECKING:
    from collections.abc import Callable

    Scan = Callable[[str, int], tuple[object, int]]

TOLD_HERE = ("SessionStart", "UserPromptSubmit", "BeforeAgent")  # (BeforeAgent: Gemini CLI's prompt)
_MAYBE = tuple(name.encode() for name in TOLD_HERE) + (b"\\u",)
_SPACE = " \t\n\r"  # what JSON allows around a value (json.decoder's WHITESPACE)


def told_here(data: bytes) -> bool:
    """Whether the hook input `data` is an event that must run in the caller's process: one of
    TOLD_HERE by its parsed `hook_event_name`. Anything else (another event, no event, not
    JSON: the command says so) goes to the resident."""
    if not any(part in data for part in _MAYBE):
        return False
    return hook_event(data) in TOLD_HERE


def hook_event(data: bytes) -> str | None:
    """The `hook_event_name` of the JSON object `data` (None: not a JSON object, or no such
    string), as `json.loads(data.decode("utf-8"))` gives it: escapes decoded, the last of
    duplicate keys, nothing read inside string values."""
    if _scanner() is None:  # no C scanner here: the command reads it, in the caller's process
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return None
        return TOLD_HERE[0] if any(name in text for name in TOLD_HERE) else None
    value = _object(data)
    event = value.get("hook_event_name") if value is not None else None
    return event if isinstance(event, str) else None


def _object(data: bytes) -> dict[str, object] | None:
    """The JSON object `data` is, as `json.loads(data.decode("utf-8"))` gives it (None: not one,
    or no C scanner here)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    scan = _scanner()
    if scan is None:
        return None
    start = len(text) - len(text.lstrip(_SPACE))
    try:
        value, end = scan(text, start)
    except (StopIteration, ValueError, RecursionError):
        return None
    if text[end:].strip(_SPACE) or not isinstance(value, dict):
        return None
    return value


def nothing_for(agent: str, data: bytes) -> bool:
    """Whether the hook input `data` is a call Stet does nothing for, told without loading Stet:
    Codex's PreToolUse matches every shell command (`Bash`) for the few that are a patch
    (`apply_patch <<'EOF'`, agents/codecs/codex.py): any other is answered with nothing here,
    as the codec answers it. Only a well-formed input (an object with its event and session);
    anything else goes on to the command, which says what is wrong."""
    if agent != "codex" or b"Bash" not in data:
        return False
    value = _object(data)
    if value is None or value.get("tool_name") != "Bash":
        return False
    if value.get("hook_event_name") not in ("PreToolUse", "PostToolUse"):
        return False
    session, tool_input = value.get("session_id"), value.get("tool_input")
    command = tool_input.get("command") if isinstance(tool_input, dict) else None
    return isinstance(session, str) and bool(session) and isinstance(command, str) and not through_shell(command)


def through_shell(command: str) -> bool:
    """agents/codecs/codex.py's own test (kept the same by a unit test): a shell command that is
    Codex's patch given to `apply_patch` by a heredoc."""
    first = command.lstrip().split("\n", 1)[0].strip()
    program, _, rest = first.partition(" ")
    return program in ("apply_patch", "applypatch") and rest.lstrip().startswith("<<")


class _Context:
    """What json.decoder.JSONDecoder gives its scanner by default."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int

    @staticmethod
    def parse_constant(name: str) -> float:
        return {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}[name]


def _scanner() -> Scan | None:
    try:
        from _json import make_scanner
    except ImportError:
        return None
    scan: Scan = make_scanner(_Context())  # type: ignore[arg-type]
    return scan
