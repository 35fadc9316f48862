"""docs/ARCHITECTURE.md says what the code is: each room's paragraph names every module of that
room, and every `module.name` it cites exists (it once cited `tx.save_hunk`, which did not)."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

SERVER = Path(__file__).resolve().parents[2] / "server" / "stet"
DOC = (SERVER.parents[1] / "docs" / "ARCHITECTURE.md").read_text()
ROOMS = sorted(p.name for p in SERVER.iterdir() if (p / "__init__.py").exists())


def modules(room: str) -> list[str]:
    return sorted(p.stem for p in (SERVER / room).glob("*.py") if p.stem != "__init__")


def paragraph(room: str) -> str:
    """The paragraph (up to the next blank line) that starts with **room/**."""
    found = re.search(rf"^\*\*{room}/\*\*.*?(?=\n\n|\Z)", DOC, re.S | re.M)
    assert found, f"docs/ARCHITECTURE.md has no paragraph for {room}/ (one starting with **{room}/**)"
    return found.group(0)


def cited(text: str) -> list[str]:
    """Every backticked `name` or `name.attr` (ignores code with spaces, slashes, calls)."""
    return re.findall(r"`([A-Za-z_][\w.]*)`", text)


def test_each_room_names_every_module():
    missing = []
    for room in ROOMS:
        names = {c.split(".")[0] for c in cited(paragraph(room))}
        missing += [f"{room}/{m}.py" for m in modules(room) if m not in names]
    assert not missing, "docs/ARCHITECTURE.md does not name: " + ", ".join(missing)


def test_top_level_modules_are_named():
    top = [p.stem for p in SERVER.glob("*.py") if not p.stem.startswith("__")]
    assert [m for m in top if f"{m}.py" not in DOC] == []


def test_every_cited_attribute_exists():
    wrong = []
    for room in ROOMS:
        found = re.search(rf"^\*\*{room}/\*\*.*?(?=\n\n|\Z)", DOC, re.S | re.M)
        for ref in cited(found.group(0) if found else ""):
            mod, _, attr = ref.partition(".")
            if attr and attr != "py" and mod in modules(room):
                target = importlib.import_module(f"stet.{room}.{mod}")
                if not hasattr(target, attr.split(".")[0]):
                    wrong.append(f"{room}/{mod}.py has no {attr}")
    # Outside the rooms' paragraphs: `module.attr` where the module name is one room's only.
    owners: dict[str, list[str]] = {}
    for room in ROOMS:
        for m in modules(room):
            owners.setdefault(m, []).append(room)
    for ref in cited(DOC):
        mod, _, attr = ref.partition(".")
        if attr == "py":  # a file named by itself: `wire.py`
            if not list(SERVER.rglob(ref)):
                wrong.append(f"no file {ref}")
        elif attr and len(owners.get(mod, [])) == 1:
            target = importlib.import_module(f"stet.{owners[mod][0]}.{mod}")
            if not hasattr(target, attr.split(".")[0]):
                wrong.append(f"{owners[mod][0]}/{mod}.py has no {attr}")
    for path in re.findall(r"`((?:[a-z_]+/)+[a-z_]+\.py)`", DOC):
        if not (SERVER / path).exists() and not (SERVER.parents[1] / path).exists():
            wrong.append(f"no file {path}")
    assert not wrong, "docs/ARCHITECTURE.md cites what does not exist: " + "; ".join(sorted(set(wrong)))
