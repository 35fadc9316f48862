"""Diagnostics are published as JSON built directly: the same JSON that lsprotocol + cattrs
give for `present.diagnostic`."""

import pytest
from lsprotocol import converters

from stet.domain.model import Hunk, Kind
from stet.domain.status import Status
from stet.lsp import present

_conv = converters.get_converter()


def _hunk(status, old=("a\n",), new=("b\n", "c\n"), message=None, line=4, last_unterminated=False):
    if last_unterminated:
        old = ("tail",)
    return Hunk(
        id="h1",
        proposal_id="p",
        task_id=None,
        seq=0,
        uri="file:///x",
        kind=Kind.EDIT,
        status=status,
        line=line,
        old=old,
        new=new,
        ctx_before=(None,),
        ctx_after=(None,),
        message=message,
        version=3,
    )


@pytest.mark.parametrize("status", [Status.PENDING, Status.ACCEPTED, Status.STALE])
@pytest.mark.parametrize("end", [None, (100, 0), (5, 0), (4, 2), (2, 0)])
@pytest.mark.parametrize("variant", [{}, {"message": "why"}, {"old": ()}, {"last_unterminated": True}])
def test_diagnostic_json_is_what_lsprotocol_sends(status, end, variant):
    h = _hunk(status, **variant)
    assert present.diagnostic_json(h, end) == _conv.unstructure(present.diagnostic(h, end))
