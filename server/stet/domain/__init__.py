"""Pure review logic: text, hunks, statuses, anchoring. No I/O, no LSP, no SQL."""
