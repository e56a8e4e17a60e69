"""RAGAS-style answer metrics: judged by Claude, exact against golden chunks, or approximated.

Judged (formulas as ragas implements them; src: explodinggradients/ragas,
`src/ragas/metrics/_faithfulness.py`, `_answer_relevance.py`, `_context_precision.py`,
`_context_recall.py`), every call through `ragkit.answer_judge.Judge`:
- `faithfulness`: the answer's statements, each judged against the contexts joined by "\\n";
  #supported / #statements; no statements → NaN.
- `answer_relevancy`: `strictness` (3) questions generated from the answer alone; mean cosine
  of each to the user's question (the embedder's L2-normalised vectors) × the noncommittal
  rule. Default rule "any" (legacy `ResponseRelevancy`, `np.any`): one noncommittal sample
  zeroes the score; "all" is the v2 collections rule. All generated questions empty → NaN.
- `context_precision`: a 0/1 verdict per retrieved context (question, context, reference),
  in retrieved order; AP = Σ_k precision@k · v_k / (Σ_k v_k + 1e-10), so the denominator is
  the relevant *retrieved* contexts and all-zero verdicts give 0.
- `context_recall`: the reference's sentences attributable to the joined contexts / total;
  no sentence → NaN.
An item the judge could not decide (malformed replies, a tied vote) scores NaN.

Exact offline (the golden spans make these the same quantities with a perfect judge of
relevance): `context_precision_golden` — the AP above with v_k = 1 iff chunk k satisfies a
golden item (`ragkit.evaluate.judge`); `context_recall_golden` — the share of golden items
satisfied by some retrieved chunk.

Approximations, named so (word overlap and the index embedder's cosine, not a judge):
`faithfulness_lexical` — the share of answer sentences with at least half of their content
tokens in the contexts (`ragkit.support`); `answer_relevancy_cosine` — cosine of question
and answer × the same noncommittal phrase rule. (The offline stand-in judge uses these same
rules, so offline the judged metrics reproduce them; they are not a model's verdicts.)

`ragas_table(rows)` compares the means with the targets of the 2026 RAG best-practice notes:
faithfulness ≥ 0.85, answer relevancy ≥ 0.8, context precision ≥ 0.75, context recall ≥ 0.8
(premai.io's recommended values, not a standard).
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from ragkit.evaluate import Judgments, pass_at_k
from ragkit.answer_judge import Judge
from ragkit.support import (SUPPORT_THRESHOLD, content_tokens, is_noncommittal, sentences,
                            supported)

NAN = float("nan")
THRESHOLDS = {"faithfulness": 0.85, "answer_relevancy": 0.8, "context_precision": 0.75,
              "context_recall": 0.8}
# column -> (the RAGAS metric it stands for, how it is obtained)
COLUMNS = {
    "faithfulness": ("faithfulness", "judged"),
    "faithfulness_lexical": ("faithfulness", "approximation: word overlap"),
    "answer_relevancy": ("answer_relevancy", "judged"),
    "answer_relevancy_cosine": ("answer_relevancy", "approximation: embedder cosine"),
    "context_precision": ("context_precision", "judged"),
    "context_precision_golden": ("context_precision", "exact: golden chunks"),
    "context_recall": ("context_recall", "judged"),
    "context_recall_golden": ("context_recall", "exact: golden chunks"),
}


def _nan_or(values: Sequence[float]) -> float:
    """The mean of `values`; NaN when empty or when any item is undecided (NaN)."""
    if not values or any(math.isnan(v) for v in values):
        return NAN
    return float(np.mean(values))


def average_precision(verdicts: Sequence[float]) -> float:
    """ragas's AP: Σ_k precision@k · v_k / (Σ_k v_k + 1e-10); NaN for no or undecided items."""
    if not verdicts or any(math.isnan(v) for v in verdicts):
        return NAN
    hits, total = 0.0, 0.0
    for k, verdict in enumerate(verdicts, start=1):
        hits += verdict
        total += hits / k * verdict
    return total / (hits + 1e-10)


# --------------------------------------------------------------------------- judged

def faithfulness(judge: Judge, question: str, answer: str, contexts: Sequence[str]) -> float:
    """#statements inferable from the contexts / #statements (judged)."""
    statements = judge.statements(question, answer)
    if not statements:  # a failed reply (None) or nothing stated ([]): NaN either way
        return NAN
    return _nan_or(judge.faithfulness(statements, "\n".join(contexts)))


def answer_relevancy(judge: Judge, question: str, answer: str, embedder, strictness: int = 3,
                     noncommittal: str = "any") -> float:
    """Mean cosine of generated questions to `question`, zeroed by the noncommittal rule."""
    if noncommittal not in ("any", "all"):
        raise ValueError(f"noncommittal rule must be 'any' or 'all', got {noncommittal!r}")
    generated = [g for g in (judge.question(answer, k) for k in range(strictness)) if g]
    if not generated or not any(text for text, _ in generated):
        return NAN
    vectors = embedder.embed([question] + [text for text, _ in generated], input_type="query")
    flags = [flag for _, flag in generated]
    evasive = any(flags) if noncommittal == "any" else all(flags)
    return float(np.mean(vectors[1:] @ vectors[0])) * (not evasive)


def context_precision(judge: Judge, question: str, contexts: Sequence[str], reference: str
                      ) -> float:
    """AP of the per-context usefulness verdicts, in retrieved order (judged)."""
    return average_precision([judge.context_precision(question, c, reference)
                              for c in contexts])


def context_recall(judge: Judge, question: str, contexts: Sequence[str], reference: str
                   ) -> float:
    """Reference sentences attributable to the contexts / reference sentences (judged)."""
    parts = sentences(reference)
    if not parts:
        return NAN
    return _nan_or(judge.context_recall(question, "\n".join(contexts), parts))


# --------------------------------------------------------------------------- exact offline

def context_precision_golden(retrieved: Sequence[str], items: Sequence[frozenset[str]]
                             ) -> float:
    """ragas's AP with v_k = 1 iff retrieved chunk k satisfies some golden item."""
    relevant = frozenset().union(*items)
    return average_precision([float(ident in relevant) for ident in retrieved])


def context_recall_golden(retrieved: Sequence[str], items: Sequence[frozenset[str]]) -> float:
    """Share of golden items satisfied by some retrieved chunk."""
    return pass_at_k(list(retrieved), list(items), len(retrieved)) if items else NAN


# --------------------------------------------------------------------------- approximations

def faithfulness_lexical(answer: str, contexts: Sequence[str],
                         threshold: float = SUPPORT_THRESHOLD) -> float:
    """APPROXIMATION: share of answer sentences whose content tokens the contexts cover."""
    parts = sentences(answer)
    if not parts:
        return NAN
    pool = content_tokens("\n".join(contexts))
    return sum(supported(s, pool, threshold) for s in parts) / len(parts)


def answer_relevancy_cosine(question: str, answer: str, embedder) -> float:
    """APPROXIMATION: cosine(question, answer) with the embedder × the noncommittal rule."""
    if not answer.strip():
        return NAN
    vectors = embedder.embed([question, answer], input_type="query")
    return float(vectors[0] @ vectors[1]) * (not is_noncommittal(answer))


# --------------------------------------------------------------------------- runs and tables

def score_offline(questions: Mapping[str, str], answers: Mapping[str, str],
                  retrieved: Mapping[str, Sequence[str]], contexts: Mapping[str, Sequence[str]],
                  judgments: Judgments, embedder) -> pd.DataFrame:
    """Per query: the exact golden context metrics and the two named approximations.

    `retrieved` holds each query's chunk ids and `contexts` their texts, best first;
    queries without judgments (unanswerable) get NaN for the golden columns.
    """
    rows = {}
    for qid, question in questions.items():
        items = judgments.get(qid)
        rows[qid] = {
            "faithfulness_lexical": faithfulness_lexical(answers[qid], contexts[qid]),
            "answer_relevancy_cosine": answer_relevancy_cosine(question, answers[qid], embedder),
            "context_precision_golden":
                context_precision_golden(retrieved[qid], items) if items else NAN,
            "context_recall_golden": context_recall_golden(retrieved[qid], items) if items else NAN,
        }
    return pd.DataFrame.from_dict(rows, orient="index")


def score_judged(judge: Judge, questions: Mapping[str, str], answers: Mapping[str, str],
                 contexts: Mapping[str, Sequence[str]], references: Mapping[str, str],
                 embedder, strictness: int = 3) -> pd.DataFrame:
    """Per query: the four judged metrics (NaN where the judge could not decide)."""
    rows = {}
    for qid, question in questions.items():
        answer, ctx, reference = answers[qid], contexts[qid], references.get(qid, "")
        rows[qid] = {
            "faithfulness": faithfulness(judge, question, answer, ctx),
            "answer_relevancy": answer_relevancy(judge, question, answer, embedder, strictness),
            "context_precision": context_precision(judge, question, ctx, reference)
            if reference else NAN,
            "context_recall": context_recall(judge, question, ctx, reference)
            if reference else NAN,
        }
    return pd.DataFrame.from_dict(rows, orient="index")


def ragas_table(rows: pd.DataFrame | Sequence[Mapping[str, float]],
                judge: str = "") -> pd.DataFrame:
    """Mean of each known metric column against its threshold in the 2026 RAG best-practice notes,
    with pass/fail.

    Columns: metric (the RAGAS metric), how (judged / exact / approximation), mean over the
    scored queries, scored, NaN (queries without a score), threshold, result. `judge` names
    who judged ("judged by Claude", "judged by the offline stand-in"): a table shown or
    recorded without the text around it must not pass a program's verdicts off as a model's.
    """
    table = rows if isinstance(rows, pd.DataFrame) else pd.DataFrame(list(rows))
    out = []
    for column, (metric, how) in COLUMNS.items():
        if column not in table:
            continue
        values = pd.to_numeric(table[column], errors="coerce")
        mean = float(values.mean()) if values.notna().any() else NAN
        result = "no score" if math.isnan(mean) else \
            ("pass" if mean >= THRESHOLDS[metric] else "fail")
        shown = f"{how} by {judge}" if judge and how == "judged" else how
        out.append({"column": column, "metric": metric, "how": shown, "mean": mean,
                    "scored": int(values.notna().sum()), "NaN": int(values.isna().sum()),
                    "threshold": THRESHOLDS[metric], "result": result})
    return pd.DataFrame(out).set_index("column") if out else pd.DataFrame()
