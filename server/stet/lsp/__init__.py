"""The language server front end: the JSON-RPC wire and protocol, thin handlers, presentation."""
