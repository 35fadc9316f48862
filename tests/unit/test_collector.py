"""The server's garbage-collector tuning (runtime/collector.py): why it exists is measured in
docs/BENCHMARKS.md §8; here, that it does what it says and leaves collection working."""

import gc

from stet.runtime.collector import YOUNG_THRESHOLD, tune_for_a_long_run


def test_tuning_freezes_what_is_loaded_and_keeps_collecting_cycles():
    before = gc.get_threshold()
    try:
        tune_for_a_long_run()
        assert gc.get_threshold() == (YOUNG_THRESHOLD, before[1], before[2])
        assert gc.get_freeze_count() > 1000  # the modules' objects left the generations

        class Node:
            pass

        a, b = Node(), Node()
        a.other, b.other = b, a  # a cycle made after the freeze is still collected
        del a, b
        assert gc.collect() >= 2
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)
