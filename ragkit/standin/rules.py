"""The stand-in's rules, in the order they are tried (first match answers; see the package)."""
from __future__ import annotations

from ragkit.standin import Rule
from ragkit.standin import contextualize
from ragkit.standin import answer

RULES: list[Rule] = [
    contextualize.rule,
    answer.rule,
]
