"""The generic watcher: events arrive on the asyncio loop; inotify limits fall back to polling."""

from __future__ import annotations

import asyncio
import errno
import threading

from stet.runtime.watcher import Watcher


async def _first_event_for(watcher: Watcher, folder, name: str) -> threading.Thread:
    loop = asyncio.get_running_loop()
    got: asyncio.Future = loop.create_future()

    def on_event(event):
        if event.src_path.endswith(name) and not got.done():
            got.set_result(threading.current_thread())

    watcher.watch(str(folder), on_event)
    # Written again until an event comes (a busy machine may take a while to start watching,
    # or to poll): the test waits for the event, never for a fixed time.
    deadline = loop.time() + 60
    n = 0
    while not got.done():
        assert loop.time() < deadline, f"no event for {name} in 60 s"
        n += 1
        (folder / name).write_text(f"hello {n}")
        await asyncio.wait({got}, timeout=0.5)
    return got.result()


async def test_events_are_delivered_on_the_loop_thread(tmp_path):
    w = Watcher(asyncio.get_running_loop(), polling=False)
    w.start()
    try:
        thread = await _first_event_for(w, tmp_path, "x.txt")
        assert thread is threading.main_thread()
        assert w.warning is None and not w.polling
    finally:
        w.stop()


async def test_inotify_limits_fall_back_to_polling(tmp_path, monkeypatch):
    import watchdog.observers  # imported by the watcher when it starts (after recovery)

    class Exhausted(watchdog.observers.Observer):
        def schedule(self, *args, **kwargs):
            raise OSError(errno.ENOSPC, "inotify watch limit reached")

    monkeypatch.setattr(watchdog.observers, "Observer", Exhausted)
    w = Watcher(asyncio.get_running_loop(), polling=False)
    w.start()
    try:
        thread = await _first_event_for(w, tmp_path, "y.txt")  # scheduled after start: falls back too
        assert thread is threading.main_thread()
        assert w.polling and "inotify" in w.warning and "max_user_watches" in w.warning
    finally:
        w.stop()
