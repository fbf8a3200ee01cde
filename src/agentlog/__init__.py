"""agentlog: every coding agent's session logs in one model."""
