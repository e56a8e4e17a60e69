"""Listwise reranking by Claude: RankGPT's prompt and sliding windows through `ragkit.llm`.

What it is: `ClaudeReranker(model, window, step)` reorders the candidates of a query the way
RankGPT does (Sun et al. 2023; `sunnweiwei/RankGPT` `rank_gpt.py`, see
`ragkit.rerank.listwise`): windows of `window` (20) candidates, moved `step` (10) at a time
from the back of the list to the front; each window is one Messages API call with
RankGPT's conversation (passages cut to 300 words), and the permutation Claude answers is
applied to that window in place, so strong candidates bubble up towards the top. The text of
a candidate is the Voyage reranker's (`document_text`: chunk, then "Context: " + context).
Scores are 1/(position + 1), so the order is explicit. Temperature 0; `max_tokens` 256 (a
full answer for 20 passages, "[20] > [19] > …", is about 60 tokens).

Every call goes through `LLM.create`, so it is cached (a rerun sends nothing), metered and
priced in the run's usage log; without `ANTHROPIC_API_KEY` the offline stand-in answers
(`ragkit.standin.rerank`, a documented lexical rule, not a model's judgement).

Replies are parsed and repaired as RankGPT does (`parse_permutation`): unknown or repeated
numbers are dropped and passages left out are appended in their order. A reply that names no
passage at all leaves its window in its order. Each defect is counted (`fallbacks`,
`repaired`, out of `replies`) and a query with any defect gets one `RagkitWarning` line;
the run goes on.
Cost: 150 candidates take 14 calls per query; 20 take one (`projected_usage` estimates the
tokens before any call).

What it is not: RankGPT's prompt-shrinking loop (never needed within Claude's context
window), nor a scorer: it only orders what the first stage found.
"""
from __future__ import annotations

import threading
import warnings
from collections.abc import Sequence

from anthropic.types import Message

from ragkit.cache import CacheUnusable
from ragkit.documents import RagkitError, RagkitWarning
from ragkit.errors import KeyRejected
from ragkit.fusion import Ranking
from ragkit.llm import LLM, price
from ragkit.pricing import Usage
from ragkit.rerank.base import Candidate
from ragkit.rerank.listwise import (MAX_WORDS, Permutation, apply_in_place, build_messages,
                                    parse_permutation, windows)
from ragkit.rerank.voyage import document_text
from ragkit.text_stats import estimate_tokens, request_tokens

DEFAULT_MODEL = "claude-haiku-4-5"
MAX_TOKENS = 256


def reply_text(message: Message) -> str:
    """The reply's text blocks joined (empty when it has none)."""
    return "".join(b.text for b in message.content if getattr(b, "type", "") == "text")


class ClaudeReranker:
    """`claude`: RankGPT-style listwise reranking (see module docstring)."""

    name = "claude"

    def __init__(self, model: str = DEFAULT_MODEL, window: int = 20, step: int = 10,
                 llm: LLM | None = None, max_words: int = MAX_WORDS,
                 max_tokens: int = MAX_TOKENS) -> None:
        price(model)  # an unknown model fails here, before any call
        windows(window, window, step)  # a bad window or step fails here too
        self.model, self.window, self.step = model, window, step
        self.max_words, self.max_tokens = max_words, max_tokens
        self.llm = llm if llm is not None else LLM()
        self._lock = threading.Lock()
        self.replies = self.fallbacks = self.repaired = 0

    def rerank(self, query: str, candidates: Sequence[Candidate], k: int) -> Ranking:
        """The best k candidates after RankGPT's sliding windows, scored 1/(position + 1)."""
        items = list(candidates)
        verdicts = []
        for start, end in windows(len(items), self.window, self.step):
            if end - start < 2:
                continue  # one passage has only one order
            verdict = self._window(query, items[start:end])
            apply_in_place(items, start, verdict.order)
            verdicts.append(verdict)
        self._tally(query, verdicts)
        return [(c.chunk.id, 1.0 / (position + 1)) for position, c in enumerate(items[:k])]

    def request(self, query: str, window: Sequence[Candidate]) -> dict:
        """The Messages API body for one window: RankGPT's conversation, temperature 0."""
        system, messages = build_messages(query, [document_text(c.chunk) for c in window],
                                          self.max_words)
        return {"model": self.model, "max_tokens": self.max_tokens, "temperature": 0,
                "system": system, "messages": messages}

    def _window(self, query: str, window: Sequence[Candidate]) -> Permutation:
        try:
            reply = self.llm.create(**self.request(query, window))
        except (CacheUnusable, KeyRejected):  # its own line says what to do; no rerun helps
            raise
        except RagkitError as exc:
            raise RagkitError(f"claude reranker: {exc}; windows answered so far are kept in "
                              f"the call cache, rerun to continue") from None
        return parse_permutation(reply_text(reply), len(window))

    def _tally(self, query: str, verdicts: list[Permutation]) -> None:
        """Count the defects of one query's replies; one warning line if there were any."""
        none = sum(not v.valid for v in verdicts)
        wrong = sum(v.valid and bool(v.unknown or v.repeated) for v in verdicts)
        short = sum(v.valid and bool(v.missing) for v in verdicts)
        with self._lock:
            self.replies += len(verdicts)
            self.fallbacks += none
            self.repaired += sum(v.valid and not v.clean for v in verdicts)
        parts = [f"{n} {what}" for n, what in (
            (none, "named no passage (window order kept)"),
            (wrong, "named unknown or repeated passages (dropped)"),
            (short, "left passages out (appended in their order)")) if n]
        if parts:
            warnings.warn(f"claude reranker: query {query[:60]!r}: of {len(verdicts)} "
                          f"replies, " + ", ".join(parts), RagkitWarning, stacklevel=3)

    def summary(self) -> str:
        """One line: windows sent and replies that needed repair or fell back."""
        return (f"claude reranker ({self.model}): {self.replies} window replies, "
                f"{self.repaired} repaired, {self.fallbacks} unusable (window order kept)")


def projected_usage(reranker: ClaudeReranker, query: str, candidates: Sequence[Candidate]
                    ) -> tuple[int, Usage]:
    """(calls, estimated usage) of reranking `candidates` for `query`, before any call.

    The requests are the ones `rerank` would send (one per window of two or more passages);
    input tokens are `ragkit.text_stats.request_tokens` estimates (one per 4 UTF-8 bytes) and
    each reply is taken as a full permutation "[1] > [2] > …" of its window. An estimate for
    budgeting, not a measured count: the real order (and so later windows' content) is
    Claude's, but every window has the same size either way.
    """
    calls, usage = 0, Usage()
    for start, end in windows(len(candidates), reranker.window, reranker.step):
        if end - start < 2:
            continue
        body = reranker.request(query, candidates[start:end])
        reply = " > ".join(f"[{n}]" for n in range(1, end - start + 1))
        calls += 1
        usage += Usage(request_tokens(body), estimate_tokens(reply))
    return calls, usage
