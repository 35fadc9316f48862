"""Python's cyclic garbage collector, tuned for a process that holds a review for hours.

Measured (docs/BENCHMARKS.md §8): a bulk decision of 10,000 hunks allocates hundreds of
thousands of short-lived containers (HunkStates, ranges, rows). With the default thresholds
(700, 10, 10) they trigger about 16 full collections per run of the bulk benchmark, each
walking every object the server holds (~90 ms at 10,000 hunks): 1.5 s of the 10,000-hunk case.
Stet's data has no reference cycles to speak of (hunks, rows and texts are freed by reference
counting), so young collections can be rarer without memory growing.
"""

from __future__ import annotations

import gc

# Young collection every 10,000 net container allocations instead of 700; the older
# generations keep their default ratios (and CPython's 25 % rule for full collections).
YOUNG_THRESHOLD = 10_000


def tune_for_a_long_run() -> None:
    """Call once the process's modules are imported, before the review is opened."""
    # Everything alive now is modules, classes and functions: they live as long as the process,
    # so full collections need not walk them again (gc.freeze moves them out of every generation).
    gc.collect()
    gc.freeze()
    _, older, oldest = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, older, oldest)
