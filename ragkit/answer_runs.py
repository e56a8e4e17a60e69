"""Cited answers for a whole question set, scored and priced: how many chunks to hand over.

What it is: `answer_run(queries, hits, chunks, k)` answers every question from its top k
hits (`ragkit.answer.answer`, one call each, cached and metered by `ragkit.llm`);
`answer_rows` scores each answer — the offline RAGAS-style columns of
`ragkit.answer_metrics.score_offline`, whether it answered, whether it cites a chunk for
every golden item, its prompt and output tokens and their dollars at the model's list
price; `sweep_answer_k` repeats that for several k and returns one row of means per k,
with Pass@k of the hits, so the Contextual Retrieval article's "how many chunks to hand the
answerer" is measured against its cost.

Offline, the answers come from the stand-in's extractive rule and the token counts are its
estimates (one token per 4 UTF-8 bytes), so the dollars are projections, never a measured
cost; with an API key they are Claude's reported usage priced from `ragkit.pricing`.

What it is not: a judge (see `ragkit.answer_metrics.score_judged`).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from ragkit.answer import DEFAULT_MODEL, Answer, answer
from ragkit.answer_metrics import score_offline
from ragkit.documents import Chunk, Query
from ragkit.evaluate import Judgments, pass_at_k
from ragkit.fusion import Ranking
from ragkit.llm import LLM
from ragkit.pricing import cost


def answer_run(queries: Sequence[Query], hits: Mapping[str, Ranking | Sequence[str]],
               chunks: Sequence[Chunk] | Mapping[str, Chunk], k: int = 5, *, llm=None,
               model: str = DEFAULT_MODEL, embedder=None) -> dict[str, Answer]:
    """Query id → the cited answer from the top `k` of that query's `hits`: rankings of
    (chunk id, score), as `Pipeline.search` gives them, or the chunk ids of `Pipeline.run`
    (it was "too many values to unpack"). `embedder` as `ragkit.answer.answer` takes it
    (the index's: the offline extractive answerer, where no key is set)."""
    llm = llm or LLM()
    by_id = chunks if isinstance(chunks, Mapping) else {c.id: c for c in chunks}
    return {q.id: answer(q.text, [(h, 0.0) if isinstance(h, str) else h
                                  for h in list(hits[q.id])[:k]], by_id, llm=llm, model=model,
                         embedder=embedder)
            for q in queries}


def cites_golden(result: Answer, items: Sequence[frozenset[str]]) -> bool:
    """True when the answer does not decline and cites a chunk satisfying every item."""
    cited = {c.chunk_id for c in result.citations}
    return not result.declined and all(item & cited for item in items)


def answer_rows(queries: Sequence[Query], answers: Mapping[str, Answer],
                judgments: Judgments, embedder, model: str = DEFAULT_MODEL) -> pd.DataFrame:
    """Per query: `score_offline`'s four columns (over the passages the answerer read, best
    first), `answered`, `cites golden` (NaN for unanswerable questions), `prompt tokens`,
    `output tokens` and `$` (list price of `model`)."""
    passages = {q.id: sorted(answers[q.id].passages, key=lambda p: p.rank) for q in queries}
    table = score_offline({q.id: q.text for q in queries},
                          {q.id: answers[q.id].text for q in queries},
                          {qid: [p.chunk_id for p in ps] for qid, ps in passages.items()},
                          {qid: [p.text for p in ps] for qid, ps in passages.items()},
                          judgments, embedder)
    for q in queries:
        result, items = answers[q.id], judgments.get(q.id)
        table.loc[q.id, "answered"] = float(not result.declined)
        table.loc[q.id, "cites golden"] = float(cites_golden(result, items)) if items else np.nan
        table.loc[q.id, "prompt tokens"] = result.usage.prompt_tokens
        table.loc[q.id, "output tokens"] = result.usage.output
        table.loc[q.id, "$"] = cost(result.usage, model)
    return table


def sweep_answer_k(queries: Sequence[Query], hits: Mapping[str, Ranking],
                   chunks: Sequence[Chunk] | Mapping[str, Chunk], judgments: Judgments,
                   ks: Sequence[int], embedder, *, llm=None, model: str = DEFAULT_MODEL
                   ) -> tuple[pd.DataFrame, dict[int, pd.DataFrame]]:
    """(one row of means per k, the per-query `answer_rows` by k). `Pass@k` is the hits'
    Pass@k over judged queries; shares (answered, cites golden) are in percent."""
    rows, tables = {}, {}
    for k in ks:
        answers = answer_run(queries, hits, chunks, k, llm=llm, model=model)
        tables[k] = table = answer_rows(queries, answers, judgments, embedder, model)
        judged = [q for q in queries if q.id in judgments]
        rows[k] = {"Pass@k": 100 * float(np.mean([pass_at_k([i for i, _ in hits[q.id]],
                                                            judgments[q.id], k) for q in judged])),
                   "answered %": 100 * table["answered"].mean(),
                   "cites golden %": 100 * table["cites golden"].mean(),
                   **table[["faithfulness_lexical", "answer_relevancy_cosine",
                            "context_precision_golden", "context_recall_golden",
                            "prompt tokens", "output tokens", "$"]].mean().to_dict()}
    out = pd.DataFrame(rows).T.rename_axis("chunks handed to the answerer k")
    return out.rename(columns={"prompt tokens": "prompt tokens (est.)",
                               "output tokens": "output tokens (est.)",
                               "$": "$ / query (projected)"}), tables
