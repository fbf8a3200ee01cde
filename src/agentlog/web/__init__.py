"""The local web viewer behind ``agentlog serve``.

A read-only Flask app over the index (:mod:`agentlog.web.app`): sessions,
session transcripts, search and usage charts.  It reads only through
:mod:`agentlog.index.queries`, :mod:`agentlog.index.search` and
:mod:`agentlog.usage`; a background thread (:mod:`agentlog.web.syncer`) keeps
the index current.
"""
