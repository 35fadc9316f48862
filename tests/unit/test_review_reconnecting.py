"""The one handle that holds a long-lived process's review and opens it again (the language
server's and the MCP server's): one attempt at a time, tried again only when the engine
reconnects, the last reason kept while there is no review."""

import asyncio

import pytest

from stet.errors import StoreUnavailable
from stet.review.reconnecting import Reconnecting
from stet.review.session import Opened

PG = "postgresql://nobody@/stet?host=/nowhere"


class FakeReview:
    recovery_error = None
    closed = False

    async def close(self):
        self.closed = True


class Opener:
    """Fails `failures` times, then opens; counts the attempts, each slow enough to overlap."""

    def __init__(self, failures):
        self.failures, self.calls = failures, 0

    async def __call__(self):
        self.calls += 1
        await asyncio.sleep(0.01)
        if self.calls <= self.failures:
            raise StoreUnavailable(f"attempt {self.calls}: cannot reach it")
        return Opened(FakeReview(), None)


async def test_a_store_that_comes_back_is_opened_by_the_next_call_one_attempt_at_a_time():
    opener = Opener(failures=1)
    handle = Reconnecting(["/w"], PG, opener)
    await handle.attempt()
    assert handle.review is None and "attempt 1" in handle.error.message and handle.waiting()
    reviews = await asyncio.gather(*(handle.current() for _ in range(5)))
    assert opener.calls == 2  # five callers, one more attempt
    assert all(r is handle.review for r in reviews) and handle.error is None and not handle.waiting()
    await handle.current()
    assert opener.calls == 2  # open: no attempt more


async def test_an_sqlite_store_that_cannot_be_opened_is_refused_for_good():
    opener = Opener(failures=1)
    handle = Reconnecting(["/w"], "/w/.stet/stet.db", opener)
    await handle.attempt()
    for _ in range(2):
        with pytest.raises(StoreUnavailable, match="attempt 1"):
            await handle.current()
    assert opener.calls == 1 and not handle.waiting()


async def test_a_review_refused_by_its_process_is_closed_and_not_held():
    refused = []
    handle = Reconnecting(["/w"], PG, Opener(failures=0), adopt=lambda opened: refused.append(opened) and False)
    await handle.attempt()
    assert handle.review is None and refused[0].review.closed


async def test_a_review_not_recovered_for_want_of_its_store_is_worth_another_attempt():
    handle = Reconnecting(["/w"], PG, Opener(failures=0))
    await handle.attempt()
    handle.review.recovery_error = StoreUnavailable("gone while recovering")
    assert handle.waiting()
