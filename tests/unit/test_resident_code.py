"""The resident's look at Stet's code on disk before each call (resident/code.py)."""

import os

from stet.resident.code import Code


def _tree(tmp_path):
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "a.py").write_text("A = 1\n")
    (tmp_path / "pkg" / "sub" / "b.py").write_text("B = 2\n")
    (tmp_path / "pkg" / "notes.txt").write_text("not code\n")
    return tmp_path / "pkg"


def test_nothing_changed_and_caches_written_are_not_a_change(tmp_path):
    root = _tree(tmp_path)
    code = Code(str(root))
    assert not code.changed()
    (root / "__pycache__").mkdir()  # the parent folder's mtime changes: walked again, same code
    (root / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"\0")
    (root / "notes.txt").write_text("still not code, longer\n")
    assert not code.changed()
    assert not code.changed()


def test_a_module_edited_in_place_with_the_same_size(tmp_path):
    root = _tree(tmp_path)
    code = Code(str(root))
    b = root / "sub" / "b.py"
    st = b.stat()
    b.write_text("B = 3\n")
    os.utime(b, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    assert code.changed()


def test_a_module_added_or_removed(tmp_path):
    root = _tree(tmp_path)
    code = Code(str(root))
    (root / "sub" / "c.py").write_text("C = 1\n")
    assert code.changed()
    root2 = _tree(tmp_path / "other")
    code2 = Code(str(root2))
    (root2 / "a.py").unlink()
    assert code2.changed()
    code3 = Code(str(root2))
    for f in (root2 / "sub").iterdir():
        f.unlink()
    (root2 / "sub").rmdir()
    assert code3.changed()
