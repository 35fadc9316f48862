"""Stet: review an AI coding agent's edits hunk by hunk, durably."""

__version__ = "0.1.0"
