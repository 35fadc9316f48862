"""Background work of a running process: live sync (follow the op log), file watching, the inbox."""
