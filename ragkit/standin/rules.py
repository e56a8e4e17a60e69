"""The stand-in's rules, in the order they are tried (first match answers; see the package)."""
from __future__ import annotations

from ragkit.standin import Rule
from ragkit.standin import rerank
from ragkit.standin import contextualize

RULES: list[Rule] = [
    rerank.rule,  # first: its passages may quote the contextualization tags
    contextualize.rule,
]
