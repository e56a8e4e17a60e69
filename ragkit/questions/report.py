"""What a generation run reports: the count each filter dropped, per kind, and the cost.

What it is: `Report` — `counts[stage][kind]` for the stages in `STAGES` (asked but no usable
chunk, generated, then each filter's drops, then kept: every kind's column adds up to what
was asked), what was asked per kind, the cost projected before any call and the cost
measured after, and `table()` (the text `ragkit questions generate` prints) /
`frame()` (the same as a DataFrame, for a notebook). `project_cost(items, model)` is the
projection: estimated tokens (`ragkit.text_stats.estimate_tokens`, one token per 4 UTF-8
bytes, a lower bound for code and Korean) of the document text each question sends (a
part of one past the context window, `ragkit.questions.excerpt`) at the model's list prices,
every question assumed to reach every check, each such text written to the prompt cache by
its first question and read by the rest — or billed uncached when it is shorter than the
model's minimum cacheable length, as the API does.

What it is not: a bill. The measured cost is what the replies' usage says at the dated
prices (`ragkit.pricing`); offline, the stand-in costs nothing and says so.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ragkit.contextualize.prompts import DOCUMENT_CONTEXT_PROMPT
from ragkit.money import dollars
from ragkit.pricing import Usage, cost, price
from ragkit.questions.prompts import (ANSWER_PROMPT, CLOSED_BOOK_PROMPT, KINDS, WRITE_PROMPT,
                                      passages_text)
from ragkit.documents import RagkitError
from ragkit.questions.sample import MIN_WORDS, Item
from ragkit.text_stats import estimate_tokens

if TYPE_CHECKING:
    import pandas as pd

NO_CHUNK = "no usable chunk"  # asked, not written: the corpus had no chunk for it
NO_QUESTION = "no question written"  # a reply with an empty question: the writer found none
STAGES = (NO_CHUNK, "generated", NO_QUESTION, "malformed reply", "span not verbatim",
          "span in another document", "round-trip failed",
          "answerable from the question", "near-duplicate", "kept")
FILTERS = STAGES[2:-1]
# Assumed reply lengths (tokens) for the projection: a question with its span and answer,
# a round-trip quote, a closed-book "UNKNOWN" or one sentence.
WRITE_OUT, ANSWER_OUT, CLOSED_OUT, QUESTION = 120, 60, 20, 25


@dataclass
class Report:
    """Counts per stage and kind, what was asked, and the projected and measured cost."""

    asked: dict[str, int]
    model: str
    generator: str
    projected: float
    measured: float | None = None  # None: the offline stand-in answered (no cost)
    usage: str = ""
    dup_threshold: float | None = None  # None: near-duplicates not checked (no embedder)
    counts: dict[str, dict[str, int]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for stage in STAGES:
            self.counts.setdefault(stage, {k: 0 for k in self.asked})

    def count(self, stage: str, kind: str) -> None:
        self.counts[stage][kind] = self.counts[stage].get(kind, 0) + 1

    def settle(self) -> None:
        """Count what was asked and not written, per kind, once `generated` is counted: every
        row then adds up (asked = no usable chunk + each filter's drops + kept). It was left
        out, so a folder with few usable chunks showed 20 asked and 7 generated, and a kind
        with none (multi-chunk without two separate chunks of one document) a column of 0s,
        without a reason. Negative for a kind that was written in place of `contextual` or
        `multi-chunk` questions without a chunk (`ragkit.questions.sample`): the row's `all`
        is still the questions not written."""
        self.counts[NO_CHUNK] = {k: self.asked[k] - self.counts["generated"].get(k, 0)
                                 for k in self.asked}

    def total(self, stage: str) -> int:
        return sum(self.counts[stage].values())

    def kinds(self) -> list[str]:
        return [k for k in KINDS if k in self.asked]

    def table(self) -> str:
        """The counts as aligned text: one row per stage, one column per kind and `all`."""
        kinds = self.kinds()
        width = max(len(s) for s in STAGES)
        head = f"{'':<{width}} " + " ".join(f"{k:>12}" for k in [*kinds, "all"])
        rows = [head, f"{'asked':<{width}} " + " ".join(
            f"{n:>12}" for n in [*(self.asked[k] for k in kinds), sum(self.asked.values())])]
        for stage in STAGES:
            label = stage if stage != "near-duplicate" or self.dup_threshold is not None \
                else "near-duplicate (not checked)"
            values = [self.counts[stage].get(k, 0) for k in kinds]
            rows.append(f"{label:<{width}} " + " ".join(f"{v:>12}" for v in
                                                         [*values, sum(values)]))
        return "\n".join([*rows, *self.notes()])

    def notes(self) -> list[str]:
        """The lines under the table that say what `no usable chunk` means, when it counts
        any: why a kind had none, and what a negative count is."""
        short = self.counts[NO_CHUNK]
        if not any(short.values()):
            return []
        lines = [f"{NO_CHUNK}: asked, not written; each chunk is used once and needs "
                 f"{MIN_WORDS} words outside headings, a contextual question's must not "
                 f"name its document, a multi-chunk question needs two separate chunks of "
                 f"one document"]
        if any(v < 0 for v in short.values()):
            lines.append(f"{NO_CHUNK} below 0: written in place of the contextual or "
                         f"multi-chunk questions that had no chunk")
        return lines

    def cost_lines(self) -> list[str]:
        """The projection and the measurement, one line each."""
        measured = ("offline stand-in, no cost" if self.measured is None
                    else dollars(self.measured))
        return [f"projected: {dollars(self.projected)} at {self.model}'s prices (estimated "
                f"tokens, every question checked)", f"measured: {measured}"]

    def frame(self) -> "pd.DataFrame":
        """`table()` as a DataFrame: stages as rows, kinds and `all` as columns."""
        import pandas as pd  # deferred: pandas only for a notebook's table
        rows = {"asked": dict(self.asked), **{s: dict(self.counts[s]) for s in STAGES}}
        frame = pd.DataFrame(rows).T.reindex(columns=self.kinds()).fillna(0).astype(int)
        frame["all"] = frame.sum(axis=1)
        return frame

    def require_kept(self) -> None:
        """Raise RagkitError (one line saying why and what to do) when no answerable question
        was kept: a notebook or script that goes on to score configurations needs some. Not
        called by `generate` itself — `ragkit questions generate` writes an empty set and its
        table says why."""
        if sum(n for kind, n in self.counts["kept"].items() if kind != "unanswerable"):
            return
        raise RagkitError(
            f"no answerable question was kept (0 of {sum(self.asked.values())} asked; the "
            f"filter table says where they were lost): the comparison needs questions — give "
            f"a folder with more text or larger chunks (a chunk needs {MIN_WORDS} words "
            f"outside its headings: chunk_size in notebook 08, --chunk-size on the command "
            f"line) or ask for more (n_questions, --n)")

    def as_dict(self) -> dict:
        return {"asked": self.asked, "counts": self.counts, "model": self.model,
                "generator": self.generator, "projected_dollars": self.projected,
                "measured_dollars": self.measured, "dup_threshold": self.dup_threshold}


def _call_cost(model: str, prompt: int, out: int, cached: int = 0, written: int = 0) -> float:
    return cost(Usage(prompt, out, written, cached), model)


def project_cost(items: Sequence[Item], model: str,
                 sent: Sequence[str] | None = None) -> float:
    """Dollars for writing and checking `items` with `model` (see the module docstring);
    `sent`: the document text each item's write request sends (default: its whole document;
    `ragkit.questions.excerpt` cuts one longer than the context window)."""
    row = price(model)
    total, seen = 0.0, set()
    frame = estimate_tokens(WRITE_PROMPT) + 40  # instruction, title, kind guide
    texts = sent if sent is not None else [item.document.text for item in items]
    for item, text in zip(items, texts):
        doc = estimate_tokens(DOCUMENT_CONTEXT_PROMPT.replace("{doc_content}", text))
        passages = estimate_tokens(passages_text([c.text for c in item.chunks]))
        if doc < row.min_cacheable:
            total += _call_cost(model, doc + passages + frame, WRITE_OUT)
        elif text in seen:
            total += _call_cost(model, passages + frame, WRITE_OUT, cached=doc)
        else:
            total += _call_cost(model, passages + frame, WRITE_OUT, written=doc)
        seen.add(text)
        total += _call_cost(model, passages + estimate_tokens(ANSWER_PROMPT) + QUESTION,
                            ANSWER_OUT)
        total += _call_cost(model, estimate_tokens(CLOSED_BOOK_PROMPT) + QUESTION, CLOSED_OUT)
    return total
