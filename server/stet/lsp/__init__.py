"""The LSP surface: pygls wiring only. Protocol messages in, review calls, hunks out."""
