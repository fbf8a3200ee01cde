"""The service layer: typed queries every surface calls (the CLI, the web viewer,
the Python API), returning plain results (msgspec structs and dataclasses).

- :mod:`~agentlog.service.sessions`: listings (:func:`list_sessions`,
  :func:`page_sessions`), one session (:func:`session`, :func:`transcript_page`),
  the :func:`overview`, sessions read from the logs without an index;
- :mod:`~agentlog.service.usage`: the calls of a usage report, priced
  (:func:`index_usage`, :func:`log_usage`), session costs, Codex rate limits;
- :mod:`~agentlog.service.search`: full-text search;
- :mod:`~agentlog.service.doctor`: parse anomalies and unreadable sources;
- :mod:`~agentlog.service.index`: the sync that brings the index up to date;
- :mod:`~agentlog.service.home`: where the logs are (environment, home, ``--root``).

The filter vocabulary (times and spans, agent names, "folder contains text")
is :mod:`agentlog.query`; presentation helpers are :mod:`agentlog.present`.
Surfaces present results; they do not wire records, pricers or filters.
"""
