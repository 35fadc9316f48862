"""A path's uri as pathlib makes it, without pathlib for the real paths a glance at the store turns
into uris (`stet status` then never loads it)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from stet.workspace.paths import path_to_uri, uri_to_path

PATHS = [
    "/",
    "/w",
    "/w/a.py",
    "/w/with space/ünïcode ✓.txt",
    "/w/100%/#hash?q=1&x;y",
    "/w/a\udcff.bin",  # a byte that is not UTF-8, as os.fsdecode gives it
    "/w/./a",
    "/w/../a",
    "/w//a",
    "//w/a",
    "///w",
    "/w/a/",
    "/w/~user/$HOME/[x]{y}",
]


@pytest.mark.parametrize("path", PATHS)
def test_a_paths_uri_is_pathlibs(path):
    assert path_to_uri(path) == Path(path).as_uri()


def test_a_relative_path_is_refused_as_pathlib_refuses_it():
    with pytest.raises(ValueError):
        path_to_uri("w/a.py")


def test_a_real_paths_uri_reads_back_and_loads_no_pathlib():
    assert uri_to_path(path_to_uri("/w/ü x/%41")) == "/w/ü x/%41"
    code = (
        "import sys; from stet.workspace.paths import path_to_uri; path_to_uri('/w/a'); print('pathlib' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
