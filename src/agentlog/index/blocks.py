"""The order of a search sorted by rank when more hits match than one window ranks.

Ranking costs each hit ranked (bm25 reads its size, the sort keys its message), so
a search sorted by rank never ranks more than ``window`` hits together
(:data:`agentlog.index.search.RANK_WINDOW`).  The hits are cut, in index order
(newest part rowid first: the order sources were read), into fixed blocks: block
*k* holds the hits at positions ``[k·window, (k+1)·window)``.  The rank order is
(block, rank within the block), each block ranked on its own (best bm25 first, then
newest, session, message, part: :func:`rank_order`).  A block never depends on the
page asked for, so pages never overlap and every hit is on one page; where fewer
than ``window`` hits match there is one block, and the order is the plain rank order.

A flat page takes the blocks it spans (:func:`flat`).  A page of sessions walks the
blocks from the first, each session placed by its first (best) hit in that order,
until the page's sessions are found or the hits end (:func:`grouped`).

The hits of a block come from a :data:`Source`, which knows the SQL (with or
without filters, :mod:`agentlog.index.search`); this module only orders them.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Protocol

Key = tuple[Any, ...]
"""A hit and what orders it: ``(part rowid, score, timestamp or None, session, message, part)``."""


class Block(NamedTuple):
    """One block's hits: ``hits`` in :func:`rank_order` (only the ``need`` best and the
    hits tied with the last of them when the source was asked for ``need``), ``size``
    (the hits in the block: fewer than the window in the last one) and ``oldest``
    (its lowest part rowid, the next block's bound; ``None`` when empty)."""

    hits: list[Key]
    size: int
    oldest: int | None


class Source(Protocol):
    """Where a search's blocks come from."""

    def __call__(self, skip: int, before: int | None, need: int | None, count: int | None = None) -> Block:
        """The block of the ``window`` hits (``count`` when given: a part of a block)
        after the newest ``skip`` of those below part rowid ``before`` (every hit when
        ``None``), keyed for at least its ``need`` best (all when ``None``)."""
        ...

    def sessions(self, before: int | None) -> Walked:
        """The block of hits below ``before`` as a walk reads it (no scores)."""
        ...

    def firsts(self, parts: list[dict[int, str]], wanted: int) -> list[list[First]]:
        """For each of ``parts`` (``{part rowid: session}`` of the hits of the sessions
        new to one block, from the first of them to the last, in that block), the best
        hit of each of those sessions and, when it lists more than one session, its
        newest time among them (:func:`firsts_of`; ``None`` otherwise: it orders
        nothing); all scored at once.  Only the first ``wanted`` sessions in
        :func:`grouped`'s order need their best hit and time (those after them are
        counted, never shown: their scores alone may order them)."""
        ...

    def whole_blocks(self, before: int) -> tuple[str, int, int] | None:
        """``(session, hits, lowest rowid)`` of the whole blocks just below hit
        ``before`` whose hits are all of its session (a multiple of the window), read
        without their hits; ``None`` when the next block is not (or not known to be)."""
        ...


class Walked(NamedTuple):
    """A block's hits as a walk reads them: their part ``rowids``, newest first, and
    ``spans``, ``(session, start, end)`` for each stretch ``rowids[start:end]`` of one
    session's hits, in order (:func:`agentlog.index.runs.spans_of`)."""

    rowids: list[int]
    spans: list[tuple[str, int, int]]


class First(NamedTuple):
    """A ``session``'s best hit in a block (part ``rowid``, ``score``) and its ``newest``
    time there (``None``: no time, or not asked for: its score ties no other new
    session's in the block, so the time orders nothing)."""

    rowid: int
    score: float
    session: str
    newest: Any


def firsts_of(hits: list[Key], fresh: dict[int, str]) -> list[First]:
    """Of ``hits`` (keyed, in :func:`rank_order`), the first (best) hit of each
    session whose hits ``fresh`` lists, and its newest time among ``hits``."""
    new: dict[str, list[Any]] = {}  # session: [best hit, newest time]
    for hit in hits:
        if hit[0] in fresh:
            group = new.setdefault(hit[3], [hit, None])
            if hit[2] is not None and (group[1] is None or hit[2] > group[1]):
                group[1] = hit[2]
    return [First(best[0], best[1], best[3], newest) for best, newest in new.values()]


class Group(NamedTuple):
    """A session on a grouped page: its best hit (part ``rowid``, ``score``) and its
    ``hits`` in the blocks walked."""

    rowid: int
    score: float
    hits: int


class Flat(NamedTuple):
    """A flat page's hits (:class:`Key`) and, when the blocks read showed where the hits
    end, how many match (``None`` otherwise)."""

    hits: list[Key]
    matches: int | None


class Grouped(NamedTuple):
    """The sessions of the blocks walked, the first ``wanted`` in order (the page is a
    slice of them; those after, counted only, by score: :meth:`Source.firsts`);
    ``ended``: every block was walked (the sessions are all of them); ``matches``:
    the hits walked."""

    sessions: list[Group]
    ended: bool
    matches: int


def rank_order(hits: list[Key]) -> list[Key]:
    """``hits`` in rank order: best (lowest) bm25 first, then newest (no time last),
    then session, message and part (``agentlog.index.search._ORDER`` ``rank`` and
    ``_TIE``); by stable sorts, the last key first."""
    ordered = sorted(hits, key=lambda hit: hit[3:])
    ordered.sort(key=lambda hit: (hit[2] is not None, hit[2] or ""), reverse=True)
    ordered.sort(key=lambda hit: hit[1])
    return ordered


def flat(source: Source, window: int, offset: int, limit: int) -> Flat:
    """The ``limit`` hits from ``offset`` in block order: the blocks the page spans,
    the first found by skipping ``offset // window`` blocks, the next ones below the
    previous one's oldest rowid."""
    first = offset // window
    ordered: list[Key] = []
    before: int | None = None
    matches: int | None = None
    for k in range(first, (offset + limit - 1) // window + 1):
        need = min(window, offset + limit - k * window)
        block = source(k * window if k == first else 0, before, need)
        ordered.extend(block.hits[:need])
        if block.size < window:
            if block.size or k == 0:  # the last block: the hits end in it
                matches = k * window + block.size
            break
        before = block.oldest
    start = offset - first * window
    return Flat(ordered[start : start + limit], matches)


def grouped(source: Source, window: int, wanted: int) -> Grouped:
    """The sessions of the blocks from the first until ``wanted`` are found or the hits
    end.  A session comes with its first block, where the sessions new to it are
    ordered as one window's are (``agentlog.index.search._GROUP_ORDER`` ``rank``): by
    their best hit's score, then their newest hit in that block (no time last), then
    their session (distinct, so the best hit's message and part never order).  Its ``hits`` count those of every block
    walked (a page further on may walk more and count more).  Of each block only its
    hits' sessions are read (:meth:`Source.sessions`), and only the hits from its new
    sessions' first to their last are ranked (a hit's score does not depend on the
    others ranked with it), all blocks' at once once the walk ends (:meth:`Source.firsts`);
    the whole blocks after a block that hold only its last hit's session are counted,
    not read (:meth:`Source.whole_blocks`)."""
    found: dict[str, int] = {}  # session: its hits walked
    parts: list[dict[int, str]] = []  # each block's hits of its new sessions, to rank
    before: int | None = None
    matches = news = 0
    while True:
        walked = source.sessions(before)
        fresh = {key for key, _, _ in walked.spans if key not in found}
        for key, start, end in walked.spans:
            found[key] = found.get(key, 0) + end - start
        matches += len(walked.rowids)
        if fresh:
            parts.append({walked.rowids[i]: key for key, start, end in walked.spans if key in fresh for i in range(start, end)})
            news += len(fresh)
        ended = len(walked.rowids) < window
        if ended or news >= wanted:
            break
        before = walked.rowids[-1]
        whole = source.whole_blocks(before)  # blocks that cannot hold a new session
        if whole is not None:
            key, hits, before = whole
            found[key] += hits
            matches += hits
    firsts: list[First] = []  # each session's best hit, in order
    for new in source.firsts(parts, wanted):
        groups = sorted(new, key=lambda g: g.session)  # then message and part: one session, one best hit
        groups.sort(key=lambda g: (g.newest is not None, g.newest or ""), reverse=True)  # newest DESC, none last
        groups.sort(key=lambda g: g.score)  # the best hit's score
        firsts.extend(groups)
    return Grouped([Group(g.rowid, g.score, found[g.session]) for g in firsts], ended, matches)
