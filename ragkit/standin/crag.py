"""Stand-in rule: the CRAG and Self-RAG judge prompts, and the long-context prompt.

Deterministic word-overlap rules (`ragkit.support`), never a model's judgement:
- `[ragkit judge: crag_relevance v1]` (`ragkit.agent.crag_evaluators.RELEVANCE`): the share of the
  question's content terms found in the passage, c; "relevant" if c ≥ the offline upper
  threshold (`crag.UPPER`), "partial" if c ≥ `crag.LOWER`, else "irrelevant";
- `selfrag_retrieve`: "no" for chit-chat, else "yes" (`self_rag.retrieve_rule`);
  `selfrag_isrel`, `selfrag_issup`, `selfrag_isuse`: the labels of `self_rag.isrel_rule`,
  `issup_rule`, `isuse_rule` — the rules `OfflineReflector` uses (its IsRel is the soft
  version of the same overlap);
- a user turn whose first text block opens with `<documents>` (`ragkit.agent.long_context`)
  and ends with a question: the extractive answerer of `ragkit.standin.answer` over the
  documents' sentences and lines, each document a search result titled by its source. The
  quotes come back as plain text naming their source (no citations: the documents are text
  blocks), a clause of a long line without the ", " it was cut after
  (`ragkit.standin.answer.shown`), or the decline.
Other `[ragkit judge: …]` tasks and anything else: None (not mine).
"""
from __future__ import annotations

import html
import json
import re
from typing import Any

from ragkit.agent import crag, self_rag
from ragkit.answer import DECLINE
from ragkit.assemble import blocks
from ragkit.standin.answer import choose, shown
from ragkit.standin.base import Reply, user_text
from ragkit.support import coverage

_HEADER = re.compile(r"^\[ragkit judge: (\w+) v\d+\]")
_DOC = re.compile(r'<document source="([^"]*)" title="([^"]*)">\n(.*?)\n</document>', re.S)


def _block(text: str, name: str) -> str:
    found = re.search(rf"<{name}>\n(.*?)\n</{name}>", text, re.S)
    return found.group(1) if found else ""


def verdict(task: str, text: str) -> dict[str, Any] | None:
    """The reply JSON for one rendered CRAG / Self-RAG judge prompt; None if not one."""
    question, passage, answer = (_block(text, n) for n in ("question", "passage", "answer"))
    reason = "word overlap (offline stand-in rule)"
    if task == "crag_relevance":
        c = coverage(question, passage)
        label = "relevant" if c >= crag.UPPER else "partial" if c >= crag.LOWER else "irrelevant"
        return {"reason": reason, "label": label}
    if task == "selfrag_retrieve":
        return {"reason": reason, "retrieve": "yes" if self_rag.retrieve_rule(question) else "no"}
    if task == "selfrag_isrel":
        return {"reason": reason, "label": self_rag.isrel_rule(question, passage)}
    if task == "selfrag_issup":
        return {"reason": reason, "label": self_rag.issup_rule(answer, passage)}
    if task == "selfrag_isuse":
        return {"reason": reason, "utility": int(self_rag.isuse_rule(question, answer))}
    return None


def _long_context(request: dict[str, Any]) -> Reply | None:
    users = [m for m in request.get("messages", []) if m.get("role") == "user"]
    content = users[-1].get("content") if users else None
    if request.get("tools") or not isinstance(content, list) or len(content) < 2:
        return None
    texts = [b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"]
    if len(texts) < 2 or not texts[0].startswith("<documents>"):
        return None
    results = [{"source": html.unescape(src), "title": html.unescape(title),
                "content": [{"type": "text", "text": b} for b in blocks(body)]}
               for src, title, body in _DOC.findall(texts[0])]
    chosen = choose(texts[-1], results)
    if not chosen:
        return Reply.text(DECLINE)
    quotes = [f"{shown(unit)} (source: {results[unit.result]['source']})"
              for unit, _ in chosen]
    return Reply.text(" ".join(quotes))


def rule(request: dict[str, Any]) -> Reply | None:
    """A CRAG / Self-RAG judge prompt or a long-context prompt → its reply; else None."""
    text = user_text(request)
    header = _HEADER.match(text)
    if header:
        reply = verdict(header.group(1), text)
        return Reply.text(json.dumps(reply, ensure_ascii=False)) if reply is not None else None
    return _long_context(request)
