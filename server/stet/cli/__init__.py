"""The command line, split by subject: review commands, tasks, doctor, demo, output helpers.
The entry point is `stet.cli.main:main`."""
