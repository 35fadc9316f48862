"""ACP's stdio framing (stet/acp/wire.py): lines kept as read, bounded, in any chunking."""

from __future__ import annotations

import asyncio

from stet.acp.wire import LAST, PIECE, WHOLE, Lines, encode, parse, split_end


async def _all(data: bytes, bound: int, step: int) -> list[tuple[bytes, int]]:
    reader = asyncio.StreamReader()
    for i in range(0, len(data), step):
        reader.feed_data(data[i : i + step])
    reader.feed_eof()
    lines, out = Lines(reader, bound), []
    while (got := await lines.next()) is not None:
        out.append(got)
    return out


async def test_lines_are_kept_as_read_whatever_the_chunks():
    data = b'{"a":1}\n{"b": "\xc3\xa9"}\r\n\nnot json\nlast without end'
    for step in (1, 2, 7, 1000):
        got = await _all(data, 1 << 20, step)
        assert got == [
            (b'{"a":1}\n', WHOLE),
            (b'{"b": "\xc3\xa9"}\r\n', WHOLE),
            (b"\n", WHOLE),
            (b"not json\n", WHOLE),
            (b"last without end", WHOLE),
        ]
        assert b"".join(d for d, _ in got) == data


async def test_a_line_over_the_bound_comes_in_pieces_and_the_next_is_whole_again():
    data = b"x" * 50 + b"\n" + b"ok\n" + b"y" * 11 + b"\n" + b"z" * 30
    for step in (1, 4, 16, 1000):
        got = await _all(data, 10, step)
        assert b"".join(d for d, _ in got) == data
        kinds = [k for _, k in got]
        assert (b"ok\n", WHOLE) in got
        assert kinds[-1] == LAST  # the stream ended inside an over-long line
        assert all(k in (PIECE, LAST) for d, k in got if d != b"ok\n")
        assert sum(k == LAST for k in kinds) == 3  # each over-long line ends once


async def test_a_line_of_exactly_the_bound_is_whole():
    assert [k for _, k in await _all(b"a" * 10 + b"\n", 10, 3)] == [WHOLE]
    assert [k for _, k in await _all(b"a" * 11 + b"\n", 10, 100)] == [LAST]


def test_parse_split_and_encode():
    raw, end = split_end(b'{"id": 1, "method": "x"}\r\n')
    assert end == b"\r\n" and parse(raw).is_request
    assert parse(b"[1, 2]").body is None and parse(b"\xff").body is None and parse(b"[" * 100000).body is None
    assert encode({"t": "é", "n": [1, 2]}) == '{"t":"é","n":[1,2]}\n'.encode()
