"""The transcripts in docs/examples/ are what their scripts print today: each script is run
here with the real `stet` on PATH, as a user runs it (Python writes its bytecode), and its
output compared with the recorded `.txt`, hunk and proposal ids and the temporary folder masked.
The README's excerpts of them are checked against the same transcripts."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "docs" / "examples").glob("*.sh"))
IDS = re.compile(r"\b(h[0-9a-f]{12}|c-[0-9a-f]{16})\b")
TEMP = re.compile(r"(?:/[\w.+-]+)*/tmp\.[A-Za-z0-9]{10}")


def masked(text: str, numbered: bool = True) -> str:
    """Ids numbered in order of appearance (the same id is the same number everywhere), or all
    alike; the script's temporary folder as TMP."""
    seen: dict[str, str] = {}

    def name(m: re.Match[str]) -> str:
        kind = "H" if m.group(1).startswith("h") else "P"
        if not numbered:
            return f"<{kind}>"
        return seen.setdefault(m.group(1), f"<{kind}{sum(v[1] == kind for v in seen.values()) + 1}>")

    return IDS.sub(name, TEMP.sub("TMP", text))


def run_example(script: Path, tmp_path: Path) -> str:
    """The script's output, run as its header says, with this checkout's `stet` first on PATH."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    stet = bin_dir / "stet"
    stet.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m stet "$@"\n')
    stet.chmod(0o755)
    (tmp_path / "t").mkdir()
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("STET_", "GIT_")) and k != "PYTHONDONTWRITEBYTECODE"
    }
    # Each command in its own process (the suite leaves no resident behind); the answers are
    # the resident's too (README: the same code, the same answer).
    env.update({"PATH": f"{bin_dir}{os.pathsep}{env['PATH']}", "TMPDIR": str(tmp_path / "t"), "STET_RESIDENT": "off"})
    p = subprocess.run(["sh", str(script)], cwd=tmp_path, env=env, capture_output=True, timeout=600)
    assert p.returncode == 0, (p.stdout.decode(), p.stderr.decode())
    assert p.stderr == b"", p.stderr.decode()
    return p.stdout.decode("utf-8")


@pytest.mark.parametrize("script", EXAMPLES, ids=[s.stem for s in EXAMPLES])
def test_a_transcript_is_what_its_script_prints(script, tmp_path):
    recorded = script.with_suffix(".txt").read_text()
    now = run_example(script, tmp_path)
    assert masked(now) == masked(recorded), (
        f"{script.name} prints something else than {script.with_suffix('.txt').name}: record it again with "
        f"the command in its header (the masked difference is above)"
    )
    assert list((tmp_path / "t").iterdir()) == [], "the script leaves nothing in the temporary folder"


def readme_excerpts() -> list[tuple[str, list[str]]]:
    """(transcript name, the lines of the console block after the README's link to it)."""
    text = (ROOT / "README.md").read_text()
    out = []
    for m in re.finditer(r"\[the whole\s+transcript\]\(docs/examples/([\w-]+\.txt)\)", text):
        block = text[m.end() :].split("```console\n", 1)[1].split("```", 1)[0]
        out.append((m.group(1), block.splitlines()))
    return out


@pytest.mark.parametrize("name,lines", readme_excerpts(), ids=[n for n, _ in readme_excerpts()])
def test_the_readme_quotes_the_transcripts_as_they_are(name, lines):
    transcript = set(masked((ROOT / "docs" / "examples" / name).read_text(), numbered=False).splitlines())
    # A note the README adds after a line (two spaces, then in parentheses) is not output.
    missing = [
        line
        for line in lines
        if line.strip()
        and masked(line, numbered=False) not in transcript
        and masked(re.sub(r"\s{2,}\(.*\)$", "", line), numbered=False) not in transcript
    ]
    assert len(lines) > 5 and missing == [], f"README lines not in docs/examples/{name}: {missing}"
