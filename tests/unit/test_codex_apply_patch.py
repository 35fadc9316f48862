"""Codex CLI's patch format: its grammar (adds, deletes, updates, moves, several chunks, the
end-of-file marker), malformed patches refused with where and why, and an update made on a
file's text with Codex's context matching."""

from __future__ import annotations

import pytest

from stet.domain.apply_patch import Chunk, FilePatch, PatchError, apply, parse


def test_an_add_a_delete_and_an_update_with_a_move():
    patch = "\n".join(
        [
            "*** Begin Patch",
            "*** Add File: docs/new.md",
            "+# New",
            "+",
            "+text",
            "*** Delete File: old.txt",
            "*** Update File: src/a.py",
            "*** Move to: src/b.py",
            "@@ def main():",
            "-    return 1",
            "+    return 2",
            "*** End Patch",
        ]
    )
    assert parse(patch) == [
        FilePatch("add", "docs/new.md", content="# New\n\ntext\n"),
        FilePatch("delete", "old.txt"),
        FilePatch(
            "update",
            "src/a.py",
            move_to="src/b.py",
            chunks=(Chunk("def main():", ("    return 1",), ("    return 2",)),),
        ),
    ]


def test_a_move_alone_and_chunks_with_and_without_anchors():
    (moved,) = parse("*** Begin Patch\n*** Update File: a\n*** Move to: b\n*** End Patch\n")
    assert (moved.kind, moved.path, moved.move_to, moved.chunks) == ("update", "a", "b", ())
    (upd,) = parse(
        "*** Begin Patch\n*** Update File: f.py\n x = 1\n-y = 2\n+y = 3\n@@\n a\n-b\n+c\n@@ class K:\n-d\n+e\n"
        "*** End of File\n*** End Patch"
    )
    assert upd.chunks == (
        Chunk(None, ("x = 1", "y = 2"), ("x = 1", "y = 3")),
        Chunk(None, ("a", "b"), ("a", "c")),
        Chunk("class K:", ("d",), ("e",), at_end=True),
    )


def test_a_heredoc_and_surrounding_whitespace_are_taken_as_codex_takes_them():
    text = "apply_patch <<'EOF'\n*** Begin Patch\n  *** Delete File: gone.txt  \n*** End Patch\nEOF\n"
    assert parse(text) == [FilePatch("delete", "gone.txt")]


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("", "first line"),
        ("*** Update File: a\n-x\n+y\n*** End Patch", "first line"),
        ("*** Begin Patch\n*** Delete File: a\n", "last line"),
        ("*** Begin Patch\n*** End Patch", "no file"),
        ("*** Begin Patch\n*** Frobnicate File: a\n*** End Patch", "file header"),
        ("*** Begin Patch\n*** Delete File:   \n*** End Patch", "names no file"),
        ("*** Begin Patch\n*** Update File: a\n*** End Patch", "changes nothing"),
        ("*** Begin Patch\n*** Update File: a\n-x\n?y\n*** End Patch", "starts with"),
        ("*** Begin Patch\n*** Update File: a\n@@\n@@\n-x\n*** End Patch", "empty chunk"),
    ],
)
def test_malformed_patches_are_refused_saying_why(text, says):
    with pytest.raises(PatchError, match=says):
        parse(text)


def test_a_patch_longer_than_the_limit_is_refused_unread():
    with pytest.raises(PatchError, match="longer than"):
        parse("*** Begin Patch\n" + "+x\n" * 100 + "*** End Patch", limit=200)


def test_an_update_is_made_where_its_context_is():
    text = "def a():\n    return 1\n\ndef b():\n    return 1\n"
    (upd,) = parse("*** Begin Patch\n*** Update File: f\n@@ def b():\n-    return 1\n+    return 2\n*** End Patch")
    assert apply(text, upd.chunks) == "def a():\n    return 1\n\ndef b():\n    return 2\n"


def test_several_chunks_in_order_and_an_insertion_at_the_end():
    text = "one\ntwo\nthree\nfour\n"
    (upd,) = parse(
        "*** Begin Patch\n*** Update File: f\n-one\n+ONE\n@@\n three\n-four\n+FOUR\n@@\n+five\n*** End Patch"
    )
    assert apply(text, upd.chunks) == "ONE\ntwo\nthree\nFOUR\nfive\n"


def test_the_end_of_file_chunk_matches_the_last_lines():
    text = "x\nend\nx\nend\n"
    (upd,) = parse("*** Begin Patch\n*** Update File: f\n-end\n+END\n*** End of File\n*** End Patch")
    assert apply(text, upd.chunks) == "x\nend\nx\nEND\n"


def test_context_is_found_exactly_then_ignoring_trailing_then_all_surrounding_whitespace():
    chunk = (Chunk(None, ("a = 1",), ("a = 2",)),)
    assert apply("a = 1   \n", chunk) == "a = 2\n"
    assert apply("    a = 1\n", chunk) == "a = 2\n"
    assert apply("a = 1 \na = 1\n", chunk) == "a = 1 \na = 2\n", "an exact match wins over a looser earlier one"


def test_a_chunk_not_in_the_file_is_an_error_naming_the_file():
    with pytest.raises(PatchError, match="src/a.py: cannot find"):
        apply("nothing here\n", (Chunk(None, ("missing",), ("x",)),), "src/a.py")
    with pytest.raises(PatchError, match="cannot find the line"):
        apply("a\n", (Chunk("def nowhere():", ("a",), ("b",)),))


def test_finding_a_chunk_is_bounded_in_work():
    text = "x\n" * 2000
    chunk = (Chunk(None, ("x",) * 1000 + ("y",), ("z",)),)
    with pytest.raises(PatchError, match="too long"):
        apply(text, chunk, budget=100_000)
    assert apply("a\nb\n", (Chunk(None, ("b",), ("c",)),), budget=10) == "a\nc\n"
