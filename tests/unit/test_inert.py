"""domain/inert.py: what an agent wrote, made safe to print on a terminal."""

from __future__ import annotations

import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from stet.domain.inert import inert, shown

UNSAFE = ("Cc", "Cf", "Zl", "Zp", "Cs")


def _raw(text: str, keep: str = "") -> set[str]:
    return {c for c in text if c not in keep and unicodedata.category(c) in UNSAFE}


def test_each_kind_of_control_is_shown_as_its_escape() -> None:
    text = "a\x1b[2Kb\x1b]52;c;QQ==\x07c\x08\r\n\t\x7f\x9b\u202e\u2066\u200f\u200b\ufeff\u2028\U000e0041\udcff"
    assert inert(text) == (
        "a\\x1b[2Kb\\x1b]52;c;QQ==\\x07c\\x08\\r\\n\\t\\x7f\\x9b\\u202e\\u2066\\u200f\\u200b\\ufeff\\u2028"
        "\\U000e0041\\xff"
    )


def test_printable_text_is_left_as_it_is() -> None:
    for text in ("plain", "naïve café — ✓ 日本語 🙂", "a\\x1b stays a backslash", "nbsp\u00a0and\u3000wide spaces"):
        assert inert(text) == text


def test_kept_characters_stay() -> None:
    assert inert("a\tb\nc\x1b", keep="\t") == "a\tb\\nc\\x1b"
    assert inert("a\nb", keep="\n") == "a\nb"


@given(st.text())
def test_nothing_unsafe_is_left_and_it_is_idempotent(text: str) -> None:
    out = inert(text)
    assert not _raw(out)
    assert inert(out) == out
    assert not _raw(inert(text, keep="\t"), keep="\t")


def test_a_file_name_is_quoted_only_when_it_must_be() -> None:
    assert shown("src/a b.py") == "src/a b.py"
    assert shown("a\nb") == '"a\\nb"'
    assert shown('x"\\\x1b') == '"x\\"\\\\\\x1b"'
    assert shown("evil\u202egnp.py") == '"evil\\u202egnp.py"'  # a bidi override: the name read backwards
    assert shown("csi\x9b") == '"csi\\x9b"'
    assert shown("bad\udce9.txt") == '"bad\\xe9.txt"'  # a byte that was not UTF-8


@given(st.text())
def test_a_shown_name_holds_nothing_unsafe(name: str) -> None:
    assert not _raw(shown(name))
