"""The stand-in's rules, in the order they are tried (first match answers; see the package)."""
from __future__ import annotations

from ragkit.standin import agent, answer, contextualize, crag, judge, questions, rerank
from ragkit.standin.base import Rule

RULES: list[Rule] = [
    agent.rule,  # only requests with tools, which no other rule's callers send
    rerank.rule,  # first: its passages may quote the contextualization tags
    questions.rule,  # the golden-set generator's requests (a header of their own)
    contextualize.rule,
    judge.rule,
    crag.rule,  # CRAG / Self-RAG judge prompts, the long-context prompt
    answer.rule,
]
