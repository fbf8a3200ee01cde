"""The MCP server over the index (``agentlog mcp``; extra ``mcp``): see
:mod:`agentlog.mcp.server` for the tools and :mod:`agentlog.mcp.shape` for what
they send."""
