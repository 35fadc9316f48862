"""The instant path: a resident process per store that keeps the review open, and the thin
client that `stet` starts as (client.py), which imports nothing heavy and hands the call over
a Unix socket in `.stet/` (server.py). The resident runs the very same command code on the
review it holds (cli/hosting.py): there is one implementation of every rule and decision."""
