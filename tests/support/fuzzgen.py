"""Generators shared by the fuzz tests: junk values, odd uris, stet/propose params with exactly
one thing wrong, and a fingerprint of a workspace's store and files."""

from __future__ import annotations

import hashlib
import itertools
import sqlite3

from hypothesis import strategies as st

from support.harness import rng

_ids = itertools.count(1)


def fingerprint(ws) -> str:
    """The store's decisions and the workspace's files (positions left out: they are a cache)."""
    h = hashlib.sha256()
    con = sqlite3.connect(ws / ".stet" / "stet.db")
    try:
        for table, cols in (
            ("hunks", "id, status, version, feedback, applied_text, decided_at"),
            ("oplog", "lsn, op_id, kind, args"),
            ("proposals", "id, edit_hash"),
            ("effects", "id, state, attempts"),
        ):
            for row in con.execute(f"SELECT {cols} FROM {table} ORDER BY 1"):
                h.update(repr(row).encode())
    finally:
        con.close()
    for p in sorted(ws.rglob("*")):
        if p.is_file() and ".stet" not in p.parts:
            h.update(str(p).encode() + p.read_bytes())
    return h.hexdigest()


SCALAR_JUNK = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False).filter(lambda f: f != int(f) if abs(f) < 1e300 else True),
    st.text(max_size=20),
    st.sampled_from(["\ud800", "a\udfffb", "\x00", "é😀", "'; DROP TABLE hunks;--", "x" * 5000]),
)
JUNK = st.recursive(
    SCALAR_JUNK,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=12,
)
NOT_STR = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    st.lists(SCALAR_JUNK, max_size=3),
    st.dictionaries(st.text(max_size=5), SCALAR_JUNK, max_size=3),
)
BAD_STR = st.one_of(NOT_STR.filter(lambda v: v is not None), st.sampled_from(["\ud800", "x\udc00", ""]))
BAD_OPT_STR = NOT_STR.filter(lambda v: v is not None) | st.sampled_from(["\ud800", "x\udc00"])
BAD_INT = st.one_of(
    st.none(),
    st.booleans(),
    st.text(max_size=5),
    st.floats(allow_nan=False).filter(lambda f: f != int(f) if abs(f) < 1e300 else True),
    st.integers(2**31, 2**70),
    st.integers(-(2**70), -1),
    st.lists(st.integers(), max_size=2),
)
ODD_URIS = st.sampled_from(
    [
        "",
        "file:",
        "file://",
        "file:///etc/passwd",
        "file://host/ws/a.py",
        "http://example.com/a.py",
        "untitled:a.py",
        "file:///%2e%2e/%2e%2e/etc/passwd",
        "file:///ws/../../etc/shadow",
        "file:///tmp/\x00x",
        "FILE:///etc/hosts",
        "file:///a.py\ud800",
        "vscode-remote://ssh/etc",
        "file:////etc/passwd",
        "C:\\Windows\\win.ini",
        "file:///dev/zero",
        "file:///proc/self/environ",
    ]
) | st.text(max_size=30)


def propose_template(u: str) -> dict:
    # A fresh id each time: a Conflict must not hide a wrong acceptance.
    return {
        "proposalId": f"fz-{next(_ids)}",
        "edit": {"changes": {u: [{"range": rng(2, 0, 3, 0), "newText": "FUZZ\n"}]}},
        "taskId": "t",
        "agent": "bot",
        "message": "m",
    }


def mutations_of_propose(u: str):
    """(description, params) pairs, each invalid by construction."""

    def with_(path, value):
        p = propose_template(u)
        target = p
        for key in path[:-1]:
            target = target[key]
        if value is _DELETE:
            del target[path[-1]]
        else:
            target[path[-1]] = value
        return p

    edit_path = ("edit", "changes", u, 0)
    return st.one_of(
        st.tuples(st.just("proposalId"), BAD_STR.map(lambda v: with_(("proposalId",), v))),
        st.just(("proposalId missing", with_(("proposalId",), _DELETE))),
        st.just(("proposalId too long", with_(("proposalId",), "p" * 300))),
        st.tuples(
            st.just("taskId/agent/message"),
            st.tuples(st.sampled_from(["taskId", "agent", "message"]), BAD_OPT_STR).map(
                lambda kv: with_((kv[0],), kv[1])
            ),
        ),
        st.tuples(st.just("edit"), JUNK.filter(lambda v: not isinstance(v, dict)).map(lambda v: with_(("edit",), v))),
        st.tuples(
            st.just("changes"),
            JUNK.filter(lambda v: v is not None and not isinstance(v, dict)).map(
                lambda v: with_(("edit", "changes"), v)
            ),
        ),
        st.tuples(
            st.just("uri"),
            ODD_URIS.map(
                lambda odd: {
                    **propose_template(u),
                    "edit": {"changes": {odd: [{"range": rng(0, 0, 1, 0), "newText": "x\n"}]}},
                }
            ),
        ),
        st.tuples(
            st.just("edits list"),
            JUNK.filter(lambda v: not isinstance(v, list) or (v and not all(isinstance(e, dict) for e in v))).map(
                lambda v: with_(("edit", "changes", u), v)
            ),
        ),
        st.tuples(
            st.just("newText"), BAD_STR.filter(lambda v: v != "").map(lambda v: with_(edit_path + ("newText",), v))
        ),
        st.tuples(
            st.just("range"),
            JUNK.filter(lambda v: not isinstance(v, dict)).map(lambda v: with_(edit_path + ("range",), v)),
        ),
        st.tuples(
            st.just("position"),
            st.tuples(st.sampled_from(["start", "end"]), st.sampled_from(["line", "character"]), BAD_INT).map(
                lambda t: _set_pos(propose_template(u), u, *t)
            ),
        ),
        st.tuples(
            st.just("reversed range"),
            st.just({**propose_template(u), "edit": {"changes": {u: [{"range": rng(5, 0, 2, 0), "newText": "x\n"}]}}}),
        ),
        st.tuples(
            st.just("overlap"),
            st.just(
                {
                    **propose_template(u),
                    "edit": {
                        "changes": {
                            u: [
                                {"range": rng(1, 0, 4, 0), "newText": "x\n"},
                                {"range": rng(2, 0, 3, 0), "newText": "y\n"},
                            ]
                        }
                    },
                }
            ),
        ),
        st.tuples(
            st.just("file operation"),
            st.sampled_from(
                [
                    {"kind": "create"},
                    {"kind": "delete"},
                    {"kind": "rename", "oldUri": u},
                    {"kind": "zap", "uri": u},
                    {"kind": "create", "uri": u},  # exists already
                    {"kind": "create", "uri": "file:///etc/stet-evil"},
                    {"kind": "delete", "uri": "file:///etc/hosts"},
                    {"kind": "rename", "oldUri": u, "newUri": "file:///tmp/stet-evil.py"},
                    {"kind": "delete", "uri": u + "-missing"},
                    {"kind": "create", "uri": 5},
                    {"kind": "delete", "uri": ["x"]},
                ]
            ).map(lambda op: {**propose_template(u), "edit": {"documentChanges": [op]}}),
        ),
    )


class _Del:
    pass


_DELETE = _Del()


def _set_pos(p, u, end, field, value):
    p["edit"]["changes"][u][0]["range"][end][field] = value
    return p
