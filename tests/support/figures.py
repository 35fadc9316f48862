"""Figures the reliability tests measure (rounds, kills, fuzz cases, ...), printed at the end of
the pytest run by conftest.py so that CI's log carries them."""

FIGURES: dict[str, str] = {}
