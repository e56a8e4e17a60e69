"""Stand-in rule: RankGPT's listwise ranking conversation → a lexical-overlap permutation.

Recognises a request whose system prompt is RankGPT's (`ragkit.rerank.listwise.SYSTEM`) and
whose first user turn is its "I will provide you with {num} passages…" turn; the passages
are the user turns "[i] text". Answers "[a] > [b] > …" naming every passage once: passages
ordered by how many distinct query terms they contain (terms: `ragkit.lexical.english`,
lowercase words without English stopwords), ties by original position. A counting rule, so
the reranking code path runs offline and deterministically; it is not a model's judgement of
relevance.
"""
from __future__ import annotations

import re
from typing import Any

from ragkit.lexical import english
from ragkit.rerank.listwise import SYSTEM
from ragkit.standin.base import Reply

_PREFIX = re.compile(r"I will provide you with \d+ passages, each indicated by number "
                     r"identifier \[\]\. \nRank the passages based on their relevance to "
                     r"query: (.*)\.\Z", re.S)
_PASSAGE = re.compile(r"\[(\d+)\] ?(.*)\Z", re.S)


def _text(content: Any) -> str:
    """A turn's text: the string itself, or its text blocks joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content if isinstance(b, dict))
    return ""


def lexical_order(query: str, passages: list[str]) -> list[int]:
    """0-based passage indices by distinct query terms contained, ties by position."""
    terms = set(english(query))
    overlap = [len(terms & set(english(p))) for p in passages]
    return sorted(range(len(passages)), key=lambda i: (-overlap[i], i))


def rule(request: dict[str, Any]) -> Reply | None:
    """A RankGPT ranking request → its lexical-overlap permutation; anything else → None."""
    if _text(request.get("system")) != SYSTEM:
        return None
    turns = request["messages"]
    prefix = _PREFIX.match(_text(turns[0].get("content"))) if turns else None
    if prefix is None:
        return None
    passages = [m.group(2) for turn in turns[1:-1] if turn.get("role") == "user"
                for m in [_PASSAGE.match(_text(turn.get("content")))] if m]
    order = lexical_order(prefix.group(1), passages)
    return Reply.text(" > ".join(f"[{i + 1}]" for i in order))
