"""What every stand-in rule is made of: the `Reply` a rule returns and how it reads a request.

What it is: the leaf the rule modules (`agent.py`, `answer.py`, `crag.py`, ...) and the
server (`api.py`) import, so none of them imports the `ragkit.standin` package itself:
- `Reply`: a rule's content blocks and stop reason; `Rule`: request → Reply, or None (not
  mine);
- `user_text(request)`: every text of the request's user turns (tool results included);
- `NAME`, `NO_RULE`, `STANDIN_ID_PREFIX`: how the stand-in names itself, its reply when no
  rule matches, and the prefix of its reply ids (`ragkit.llm_backends.OFFLINE_ID_PREFIX`:
  a reply whose id has it cost nothing).
What it is not: a rule. The package docstring (`ragkit.standin`) lists the rules.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ragkit.llm_backends import OFFLINE_ID_PREFIX
from ragkit.text_stats import texts

NAME = "offline stand-in"
STANDIN_ID_PREFIX = OFFLINE_ID_PREFIX
NO_RULE = "The offline stand-in has no rule for this request."


@dataclass(frozen=True)
class Reply:
    """What a rule answers: the reply's content blocks and its stop reason."""

    content: list[dict[str, Any]]
    stop_reason: str = "end_turn"

    @classmethod
    def text(cls, text: str) -> "Reply":
        return cls([{"type": "text", "text": text}])


Rule = Callable[[dict[str, Any]], "Reply | None"]


def user_text(request: dict[str, Any]) -> str:
    """Every text of the request's user turns, joined by newlines (tool results included)."""
    return "\n".join(texts([m for m in request["messages"] if m.get("role") == "user"]))
