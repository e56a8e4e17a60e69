"""Stand-in rule: ragkit's judge prompts → verdicts by word overlap, in the judge's JSON.

Recognises a user turn that starts with a `[ragkit judge: TASK vN]` header
(`ragkit.answer_judge.Template`) and answers with the JSON that `ragkit.answer_judge` parses, computed by
the rules of `ragkit.support`, the same rules as the offline approximations in
`ragkit.answer_metrics`. So the judged code path runs offline end to end, and its numbers
are word-overlap numbers, never a model's judgement:
- statements: the answer's sentences (`support.sentences`), unchanged;
- faithfulness: verdict 1 for a statement iff `support.supported(statement, context)`;
- question: the "generated question" is the answer text itself, so the judged answer
  relevancy equals the cosine of question and answer (`answer_relevancy_cosine`);
  noncommittal = `support.is_noncommittal(answer)`;
- context_precision: verdict 1 iff the reference answer is supported by the context;
- context_recall: attributed 1 for a reference sentence iff it is supported by the context.
The sample number and temperature change nothing: every sample gives the same verdict.
"""
from __future__ import annotations

import json
import re
from typing import Any

from ragkit.standin.base import Reply, user_text
from ragkit.support import is_noncommittal, sentences, supported

_HEADER = re.compile(r"^\[ragkit judge: (\w+) v\d+\]")
_NUMBERED = re.compile(r"^(\d+)\. (.*)$", re.M)


def _block(text: str, name: str) -> str:
    found = re.search(rf"<{name}>\n(.*?)\n</{name}>", text, re.S)
    return found.group(1) if found else ""


def _numbered(text: str) -> list[str]:
    return [item for _, item in _NUMBERED.findall(text)]


def verdicts(task: str, text: str) -> dict[str, Any] | None:
    """The stand-in's reply JSON for one rendered judge prompt; None for an unknown task."""
    context = _block(text, "context")
    if task == "statements":
        return {"statements": sentences(_block(text, "answer"))}
    if task == "faithfulness":
        return {"verdicts": [{"statement": i, "reason": "word overlap with the context",
                              "verdict": int(supported(s, context))}
                             for i, s in enumerate(_numbered(_block(text, "statements")), 1)]}
    if task == "question":
        answer = _block(text, "answer")
        return {"question": answer, "noncommittal": int(is_noncommittal(answer))}
    if task == "context_precision":
        return {"reason": "word overlap with the reference",
                "verdict": int(supported(_block(text, "reference"), context))}
    if task == "context_recall":
        return {"verdicts": [{"sentence": i, "reason": "word overlap with the context",
                              "attributed": int(supported(s, context))}
                             for i, s in enumerate(_numbered(_block(text, "reference")), 1)]}
    return None


def rule(request: dict[str, Any]) -> Reply | None:
    """A ragkit judge prompt → its JSON verdicts; anything else → None."""
    text = user_text(request)
    header = _HEADER.match(text)
    answer = verdicts(header.group(1), text) if header else None
    return Reply.text(json.dumps(answer, ensure_ascii=False)) if answer is not None else None
