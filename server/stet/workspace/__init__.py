"""The workspace on this machine: roots and uris, safe file reads and writes, file
operations, locks and process ownership. Knows nothing of hunks, SQL or LSP."""
