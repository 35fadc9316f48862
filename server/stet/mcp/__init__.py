"""The MCP front end: Stet's tools for agents over the Model Context Protocol."""
