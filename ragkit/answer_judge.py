"""Claude as a judge for the RAGAS-style answer metrics: fixed prompts, JSON verdicts, votes.

What it is: `Judge(llm, model, n)` sends the five judge prompts of `ragkit.answer_metrics`
through `ragkit.llm.LLM` (the paid-call cache and the usage log), parses the JSON verdicts,
and takes a majority vote over `n` samples (odd n) where the judge is noisy.
- Prompts are fixed `Template`s, each with a version string in its first line, so the
  version is part of every request and of its cache key: editing a prompt means a new
  version and new calls, never a stale cached verdict.
- Verdicts: `n = 1` asks at temperature 0; `n > 1` at 0.3 (ragas's `reproducibility`
  setting), and each sample carries its number in the prompt ("sample 2"), so the samples
  are distinct requests, cached one by one (ragas #691: identical requests gave identical
  samples). Statements are extracted once at temperature 0; the answer-relevancy questions
  are always generated at 0.3, one numbered sample each.
- Bad replies never crash a run: a reply that is not JSON, is cut off at `max_tokens`, or
  names a statement or sentence that was not asked about (or misses one) is a *failure*:
  that sample counts as no vote, a `RagkitWarning` says which task failed and why, and
  `failures` counts it per task. A malformed reply is not cached (the next run asks again).
  An item with no valid vote, or a tie among the valid ones, scores NaN.

What it is not: the answer metrics themselves (`ragkit.answer_metrics` turns verdicts into
scores) nor a model: offline, `ragkit.standin.judge` answers these prompts with documented
word-overlap rules, never presented as a model's judgement.
Prompt wording follows ragas's legacy metric prompts (`src/ragas/metrics/_faithfulness.py`,
`_answer_relevance.py`, `_context_precision.py`, `_context_recall.py`), rewritten for Claude.
"""
from __future__ import annotations

import json
import re
import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ragkit.documents import RagkitError, RagkitWarning
from ragkit.llm import LLM

JUDGE_MODEL = "claude-haiku-4-5"
SYSTEM = ("You are a careful evaluator of a retrieval-augmented question answering system. "
          "Follow the task exactly and reply with one JSON object and nothing else.")
HEADER = re.compile(r"^\[ragkit judge: (\w+) (v\d+)\]")


@dataclass(frozen=True)
class Template:
    """One judge prompt: a task name, its version and the fixed instructions."""

    task: str
    version: str
    instructions: str

    def render(self, sample: int, **blocks: str) -> str:
        """The user turn: header line with task, version and sample, instructions, blocks."""
        parts = [f"[ragkit judge: {self.task} {self.version}] sample {sample + 1}",
                 self.instructions]
        parts += [f"<{name}>\n{text}\n</{name}>" for name, text in blocks.items()]
        return "\n\n".join(parts)


STATEMENTS = Template("statements", "v1", (
    "Break the answer to the question down into standalone statements. Split every sentence "
    "into one or more fully understandable statements, replacing pronouns with what they "
    "refer to. Do not add anything the answer does not say.\n"
    'Reply as {"statements": ["...", "..."]} (an empty list if the answer states nothing).'))
FAITHFULNESS = Template("faithfulness", "v1", (
    "For each numbered statement decide whether it can be directly inferred from the "
    "context: verdict 1 if it can, 0 if it cannot. Judge only from the context.\n"
    'Reply as {"verdicts": [{"statement": 1, "reason": "...", "verdict": 1}, ...]} with '
    "exactly one entry per statement number."))
QUESTION = Template("question", "v1", (
    "Write one question that the answer answers, from the answer alone. Also say whether the "
    "answer is noncommittal (evasive, vague or saying it does not know): 1 if it is, 0 if "
    "not.\n"
    'Reply as {"question": "...", "noncommittal": 0}.'))
CONTEXT_PRECISION = Template("context_precision", "v1", (
    "Given the question, the reference answer and one retrieved context, decide whether the "
    "context was useful in arriving at the reference answer: verdict 1 if it was, 0 if not.\n"
    'Reply as {"reason": "...", "verdict": 1}.'))
CONTEXT_RECALL = Template("context_recall", "v1", (
    "For each numbered sentence of the reference answer decide whether it can be attributed "
    "to the context: attributed 1 if it can, 0 if it cannot.\n"
    'Reply as {"verdicts": [{"sentence": 1, "reason": "...", "attributed": 1}, ...]} with '
    "exactly one entry per sentence number."))
TEMPLATES = {t.task: t for t in (STATEMENTS, FAITHFULNESS, QUESTION, CONTEXT_PRECISION,
                                 CONTEXT_RECALL)}


class Malformed(ValueError):
    """A judge reply that cannot be used (the message says why)."""


def numbered(items: Sequence[str]) -> str:
    """`1. first` / `2. second` lines: how statements and sentences are put to the judge."""
    return "\n".join(f"{i}. {text}" for i, text in enumerate(items, start=1))


def parse_json(text: str) -> dict[str, Any]:
    """The JSON object in a reply, allowing code fences and words around it."""
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        raise Malformed("no JSON object in the reply")
    try:
        value = json.loads(text[start:end + 1])
    except ValueError as exc:
        raise Malformed(f"invalid JSON ({exc})") from None
    except RecursionError:  # "[" × 100,000: a traceback, not a malformed reply
        raise Malformed("invalid JSON (nested too deeply)") from None
    if not isinstance(value, dict):
        raise Malformed("the reply's JSON is not an object")
    return value


def binary(value: Any, what: str) -> int:
    """A 0/1 verdict from 0, 1, true, false, "0", "1", "yes" or "no"."""
    if isinstance(value, bool) or value in (0, 1):
        return int(value)
    text = str(value).strip().lower()
    if text in ("1", "yes", "true"):
        return 1
    if text in ("0", "no", "false"):
        return 0
    raise Malformed(f"{what} is {value!r}, not 0 or 1")


def numbered_verdicts(obj: dict[str, Any], item: str, field: str, count: int) -> list[int]:
    """Verdicts `[{item: i, field: 0/1}, ...]` for items 1..count, each exactly once."""
    entries = obj.get("verdicts")
    if not isinstance(entries, list):
        raise Malformed("no 'verdicts' list")
    found: dict[int, int] = {}
    for entry in entries:
        if not isinstance(entry, dict):
            raise Malformed("a verdict is not an object")
        number = entry.get(item)
        if isinstance(number, bool) or not isinstance(number, int) or \
                not 1 <= number <= count:
            raise Malformed(f"a verdict names unknown {item} {number!r} (asked 1-{count})")
        if number in found:
            raise Malformed(f"{item} {number} judged twice")
        found[number] = binary(entry.get(field), f"{item} {number}'s {field}")
    if len(found) != count:
        missing = sorted(set(range(1, count + 1)) - set(found))
        raise Malformed(f"no verdict for {item} {', '.join(map(str, missing))}")
    return [found[i] for i in range(1, count + 1)]


def majority(samples: Sequence[Sequence[int] | None], count: int) -> list[float]:
    """Per item, the strict majority of the valid samples' votes; NaN on a tie or no vote."""
    out = []
    for i in range(count):
        votes = [s[i] for s in samples if s is not None]
        ones = sum(votes)
        out.append(float("nan") if not votes or 2 * ones == len(votes)
                   else float(2 * ones > len(votes)))
    return out


def reply_text(message: Any) -> str:
    return "".join(getattr(b, "text", "") for b in message.content
                   if getattr(b, "type", "") == "text")


class Judge:
    """Cached, metered judge calls with majority voting (see the module docstring)."""

    def __init__(self, llm: LLM | None = None, model: str = JUDGE_MODEL, n: int = 1,
                 max_tokens: int = 1024) -> None:
        if not isinstance(n, int) or n < 1 or n % 2 == 0:
            raise RagkitError(f"judge samples n must be an odd number >= 1, got {n!r}")
        self.llm = llm if llm is not None else LLM()
        self.model, self.n, self.max_tokens = model, n, max_tokens
        self.temperature = 0.0 if n == 1 else 0.3
        self.asked: Counter[str] = Counter()
        self.failures: Counter[str] = Counter()

    def ask(self, template: Template, parse: Callable[[dict[str, Any]], Any], sample: int = 0,
            temperature: float | None = None, **blocks: str) -> Any:
        """One judge call: `parse(reply JSON)`, or None (counted, warned) when malformed."""
        self.asked[template.task] += 1
        result: dict[str, Any] = {}

        def check(message: Any) -> str | None:
            try:
                if message.stop_reason == "max_tokens":
                    raise Malformed(f"reply cut off at max_tokens={self.max_tokens}")
                result["value"] = parse(parse_json(reply_text(message)))
            except Malformed as exc:
                result["complaint"] = str(exc)
                return str(exc)
            return None

        temp = self.temperature if temperature is None else temperature
        try:
            message = self.llm.create(
                check=check, model=self.model, max_tokens=self.max_tokens, temperature=temp,
                system=SYSTEM,
                messages=[{"role": "user", "content": template.render(sample, **blocks)}])
        except RagkitError:
            if "complaint" not in result:
                raise  # the API failed: not a verdict problem
        else:
            if "value" not in result:  # from the call cache: `check` did not run
                check(message)
        if "complaint" in result:
            self.failures[template.task] += 1
            warnings.warn(f"judge {template.task} {template.version}: {result['complaint']}; "
                          f"that sample is not counted", RagkitWarning, stacklevel=3)
            return None
        return result["value"]

    # ------------------------------------------------------------------ the five questions
    def statements(self, question: str, answer: str) -> list[str] | None:
        """The answer's standalone statements (one sample at temperature 0; None on failure).

        One sample only: the statements of different samples differ, so they cannot be
        voted on; the verdicts on them are (ragas #1711 leaves faithfulness unvoted).
        """
        def parse(obj: dict[str, Any]) -> list[str]:
            items = obj.get("statements")
            if not isinstance(items, list) or not all(isinstance(s, str) for s in items):
                raise Malformed("'statements' is not a list of strings")
            return [s.strip() for s in items if s.strip()]
        return self.ask(STATEMENTS, parse, temperature=0.0, question=question, answer=answer)

    def faithfulness(self, statements: Sequence[str], context: str) -> list[float]:
        """Per statement: 1.0 if inferable from the context, 0.0 if not, NaN if undecided."""
        def parse(obj: dict[str, Any]) -> list[int]:
            return numbered_verdicts(obj, "statement", "verdict", len(statements))
        votes = [self.ask(FAITHFULNESS, parse, k, context=context,
                          statements=numbered(statements)) for k in range(self.n)]
        return majority(votes, len(statements))

    def question(self, answer: str, sample: int) -> tuple[str, int] | None:
        """A question generated from the answer alone and its noncommittal flag (0/1)."""
        def parse(obj: dict[str, Any]) -> tuple[str, int]:
            text = obj.get("question")
            if not isinstance(text, str):
                raise Malformed("'question' is not a string")
            return text.strip(), binary(obj.get("noncommittal"), "noncommittal")
        return self.ask(QUESTION, parse, sample, temperature=0.3, answer=answer)

    def context_precision(self, question: str, context: str, reference: str) -> float:
        """1.0 if the context was useful for the reference answer, 0.0 if not, NaN if unsure."""
        def parse(obj: dict[str, Any]) -> list[int]:
            return [binary(obj.get("verdict"), "verdict")]
        votes = [self.ask(CONTEXT_PRECISION, parse, k, question=question, context=context,
                          reference=reference) for k in range(self.n)]
        return majority(votes, 1)[0]

    def context_recall(self, question: str, context: str, sentences: Sequence[str]
                       ) -> list[float]:
        """Per reference sentence: 1.0 if attributable to the context, 0.0 if not, or NaN."""
        def parse(obj: dict[str, Any]) -> list[int]:
            return numbered_verdicts(obj, "sentence", "attributed", len(sentences))
        votes = [self.ask(CONTEXT_RECALL, parse, k, question=question, context=context,
                          reference=numbered(sentences)) for k in range(self.n)]
        return majority(votes, len(sentences))

    def summary(self) -> str:
        """One line: replies asked and failed per task."""
        if not self.asked:
            return "no judge calls"
        parts = [f"{task} {self.failures[task]}/{count} failed"
                 for task, count in sorted(self.asked.items())]
        return f"judge {self.model}, n={self.n}: " + ", ".join(parts)
