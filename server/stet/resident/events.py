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
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    scan = _scanner()
    if scan is None:  # no C scanner here: the command reads it, in the caller's process
        return TOLD_HERE[0] if any(name in text for name in TOLD_HERE) else None
    start = len(text) - len(text.lstrip(_SPACE))
    try:
        value, end = scan(text, start)
    except (StopIteration, ValueError, RecursionError):
        return None
    if text[end:].strip(_SPACE) or not isinstance(value, dict):
        return None
    event = value.get("hook_event_name")
    return event if isinstance(event, str) else None


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
