"""Rerankers: reorder a first-stage candidate list (hybrid top-N) and keep the top k.

The largest single step of Anthropic's Contextual Retrieval article is reranking the top 150
down to 20 (failure 2.9 % → 1.9 %); the 2026 RAG best-practice notes call reranking the
highest-ROI addition to a RAG pipeline. A reranker sees each candidate chunk with the
first-stage signals that found it, so cheap offline rerankers can learn from them and API
rerankers can ignore them.

What it is: the `Reranker` protocol and the `Candidate` record (`ragkit.rerank.base`) and
`get_reranker(name)`, which resolves a name to an instance (the `claude` reranker's module,
which loads the Anthropic SDK, is imported only when that name is asked for):
- `none`: no reranking (the first-stage order, cut to k);
- `offline`: the offline default (see `ragkit.rerank.offline`);
- `voyage:MODEL` (e.g. `voyage:rerank-2.5`): Voyage's reranker through its SDK;
- `claude`: listwise reranking by Claude, RankGPT-style sliding windows, through
  `ragkit.llm` (the offline stand-in answers it without a key).

`RerankStage` runs a reranker over many queries and never lets it crash a run: a query whose
reranker raises, or answers with a malformed list (an unknown or repeated id, a non-numeric
score, too few or too many entries), keeps its first-stage order, with a `RagkitWarning`; the
stage counts those fallbacks so the caller can show them. A missing API key (`MissingKey`, e.g.
a Voyage reranker asked to send a call its cache does not hold), a key the API refused
(`KeyRejected`) and a call cache that cannot serve the call (`CacheUnusable`: damaged, or
read-only here and without it) are the failures that end the run: their one line says what to
do, and every later query would fail alike (a read-only cache's misses kept the first-stage
order, and the run file mixed the two; a refused key cost a call and a warning per query, exit
0). So do `FAILING_RUN` failed calls in a row (an API overloaded for good: each query waited
out its retries, 2 s each for hours of queries); a malformed reply is not counted there.

What it is not: a retriever. It never sees chunks the first stage did not return.
"""
from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence

from ragkit.documents import RagkitError, RagkitWarning
from ragkit.errors import KeyRejected, MissingKey
from ragkit.fusion import Ranking
from ragkit.rerank.base import Candidate, Reranker, with_signals
from ragkit.rerank.offline import OfflineReranker
from ragkit.rerank.voyage import VoyageReranker
from ragkit.sqlite_files import CacheUnusable
from ragkit.text_stats import counted

__all__ = ["PREFIXED", "RERANKERS", "Candidate", "NoRerank", "RerankStage", "Reranker",
           "get_reranker", "with_signals"]


class NoRerank:
    """The first-stage order, cut to k."""

    name = "none"

    def rerank(self, query: str, candidates: Sequence[Candidate], k: int) -> Ranking:
        return [(c.chunk.id, c.score) for c in candidates[:k]]


def _claude() -> Reranker:
    from ragkit.rerank.claude import ClaudeReranker  # deferred: loads the Anthropic SDK (~2 s)
    return ClaudeReranker()


RERANKERS: dict[str, Callable[[], Reranker]] = {"none": NoRerank, "offline": OfflineReranker,
                                                 "claude": _claude}
PREFIXED: dict[str, Callable[[str], Reranker]] = {"voyage": VoyageReranker}


def get_reranker(name: str) -> Reranker:
    """The reranker named `name` (see the module docstring for the names)."""
    if name in RERANKERS:
        return RERANKERS[name]()
    prefix, sep, rest = name.partition(":")
    if sep and prefix in PREFIXED and rest:
        return PREFIXED[prefix](rest)
    known = ", ".join([*RERANKERS, *(f"{p}:MODEL" for p in PREFIXED)])
    raise RagkitError(f"unknown reranker {name!r}; known rerankers: {known}")


def _check_reply(reply: object, candidates: Sequence[Candidate], k: int) -> Ranking:
    """`reply` as a clean ranking, or ValueError saying what is wrong with it."""
    if not isinstance(reply, (list, tuple)):
        raise ValueError(f"expected a list of (id, score), got {type(reply).__name__}")
    known = {c.chunk.id for c in candidates}
    out: Ranking = []
    for entry in reply:
        if not (isinstance(entry, (list, tuple)) and len(entry) == 2):
            raise ValueError(f"entry {entry!r} is not an (id, score) pair")
        ident, score = entry
        if ident not in known:
            raise ValueError(f"unknown passage {ident!r}")
        if not isinstance(score, (int, float)) or isinstance(score, bool) or math.isnan(score):
            raise ValueError(f"score {score!r} of {ident!r} is not a number")
        out.append((ident, float(score)))
    if len({ident for ident, _ in out}) != len(out):
        raise ValueError("a passage is ranked twice")
    if len(out) != min(k, len(candidates)):
        raise ValueError(f"{len(out)} passages ranked, expected {min(k, len(candidates))}")
    return out


FAILING_RUN = 5  # failed reranker calls in a row that end a run


class RerankStage:
    """A reranker applied query by query, falling back to the first-stage order on failure
    (but a `MissingKey` or `CacheUnusable`, which are raised: module docstring).

    `queries` and `fallbacks` count what it did since it was made (shown by the CLI).
    """

    def __init__(self, reranker: Reranker) -> None:
        self.reranker, self.queries, self.fallbacks = reranker, 0, 0
        self._failing = 0  # failed calls in a row, not counting malformed replies

    def __call__(self, query: str, candidates: Sequence[Candidate], k: int) -> Ranking:
        """The reranked top k; [] for no candidates (the reranker is not called)."""
        if not candidates:
            return []
        self.queries += 1
        try:
            ranked = _check_reply(self.reranker.rerank(query, candidates, k), candidates, k)
        except (MissingKey, KeyRejected, CacheUnusable):  # their line says what to do; every
            raise  # query alike
        except Exception as exc:  # noqa: BLE001 - any reranker failure must not end the run
            self.fallbacks += 1
            self._failing = self._failing + 1 if isinstance(exc, RagkitError) else 0
            if self._failing >= FAILING_RUN:  # the API is down: do not wait on every query
                raise RagkitError(f"reranker {self.reranker.name}: the last {self._failing} "
                                  f"queries failed ({exc}); stopped rather than try every "
                                  f"query alike") from None
            warnings.warn(f"reranker {self.reranker.name}: {type(exc).__name__}: {exc}; "
                          f"kept the first-stage order for query {query[:60]!r}",
                          RagkitWarning, stacklevel=2)
            return [(c.chunk.id, c.score) for c in candidates[:k]]
        self._failing = 0
        return ranked

    def summary(self) -> str:
        """One line: the reranker and the queries it reranked; the failures only if any; and
        when a Claude reranker ran without a key, that the offline stand-in's rule ranked."""
        name = f"reranker {self.reranker.name}"
        if not self.fallbacks:
            line = f"{name}: reranked {counted(self.queries, 'query', 'queries')}"
        else:
            line = (f"{name}: failed on {self.fallbacks} of {self.queries} queries, which kept "
                    f"the first-stage order")
        llm = getattr(self.reranker, "llm", None)
        if getattr(llm, "offline", False):
            line += (f" — ANTHROPIC_API_KEY is not set, so the {llm.source} ordered them (a "
                     f"documented lexical rule, not Claude)")
        return line
