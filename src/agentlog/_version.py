"""agentlog's version: the one place it is written (``pyproject.toml`` reads it,
hatch ``[tool.hatch.version]``); ``agentlog --version`` prints it without
``importlib.metadata`` (~20 ms of a start-up)."""

__version__ = "0.1.0"
