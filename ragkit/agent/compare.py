"""Plain RAG vs CRAG vs Self-RAG vs long context on golden questions: accuracy, calls, cost.

What it is: `run_methods(methods, queries, client)` asks every question of `queries` with
every method — a callable `(question, llm) -> answer text` — each question through a fresh
`LLM` with its own usage log, and returns one per-question table per method: correct (below),
calls to the answerer and judge (fresh + from the call cache: Claude's, or offline the
stand-in's), the four token counters, seconds, and dollars.
`comparison_table` averages them per method. The methods: `plain_rag`, `crag_method`,
`self_rag_method`, `long_context_method`; `agentic_method()` is the agent loop when
`ragkit.agent.loop` exists, else None (its row then reads "see notebook 05").

Accuracy (`is_correct`), offline and deterministic — the same test for every method:
- a question without golden spans (unanswerable): correct iff the answer declines or says it
  does not know;
- otherwise not declined, and either every golden span is found in the answer (≥ 80 % of
  each span's content terms, `ragkit.support.coverage`; all spans, so a distractor's
  "event" span alone, without its figure, is not enough) or the answer contains the
  reference answer's key facts: all its numbers when it has any (e.g. "21 days", "€0.30"),
  else ≥ 60 % of its content terms.

Cost: dollars at Haiku 4.5 list prices × each reply's usage. Offline that usage is the
stand-in's *estimate* (one token per 4 bytes) and its cache counters are 0, so every dollar
figure is a projection, never a measured cost; for a method with a cached prefix
(`cached_prefix`: the long-context corpus) the projection bills its first query a cache write
and the others a read (`long_context.project_cost`) when the usage shows no caching.
"""
from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import pandas as pd

from ragkit.agent.crag import crag
from ragkit.agent.long_context import LongContext, project_cost
from ragkit.agent.loop import run_agent
from ragkit.agent.self_rag import self_rag
from ragkit.agent.tool import ToolContext
from ragkit.agent.tools import TOOLS
from ragkit.answer import answer, is_decline
from ragkit.documents import Query
from ragkit.evaluate import round_metrics
from ragkit.llm import LLM, UsageLog, make_client
from ragkit.pricing import Usage, cost, uncached_cost
from ragkit.progress import progress_bar
from ragkit.support import content_tokens, coverage, is_noncommittal

Method = Callable[[str, object], str]
SPAN_COVER, REFERENCE_COVER = 0.8, 0.6
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
AGENTIC = "agentic: see notebook 05"


def key_numbers(text: str) -> set[str]:
    """The numbers of a text, thousands separators removed ("1,200" → "1200")."""
    return {n.replace(",", "") for n in _NUMBER.findall(text)}


def is_correct(query: Query, text: str) -> bool:
    """The offline accuracy test of the module docstring."""
    declined = is_decline(text) or is_noncommittal(text)
    if not query.golden:
        return declined
    if declined:
        return False
    spans = [g.span for g in query.golden if g.span]
    if spans and all(coverage(span, text) >= SPAN_COVER for span in spans):
        return True
    numbers = key_numbers(query.answer)
    if numbers:
        return numbers <= key_numbers(text)
    return bool(content_tokens(query.answer)) and coverage(query.answer, text) >= REFERENCE_COVER


# --------------------------------------------------------------------------- the methods
def plain_rag(pipeline, k: int = 5, config=None) -> Method:
    """Retrieve the top k, one cited answer."""
    def run(question: str, llm) -> str:
        (hits,) = pipeline.search([question], k, *([config] if config else []))
        return answer(question, hits, pipeline.chunks, pipeline.parents, llm=llm).text
    return run


def _top(pipeline, question: str, k: int, config):
    by_id = {c.id: c for c in pipeline.chunks}
    (hits,) = pipeline.search([question], k, *([config] if config else []))
    return [by_id[i] for i, _ in hits]


def crag_method(pipeline, evaluator, fallback=None, k: int = 5, config=None) -> Method:
    """Top k → CRAG (`ragkit.agent.crag.crag`). A Claude evaluator's judge is rebound to
    each question's LLM, so its calls are counted with the method's."""

    def run(question: str, llm) -> str:
        if hasattr(evaluator, "judge"):
            evaluator.judge.llm = llm
        return crag(question, _top(pipeline, question, k, config), evaluator, fallback,
                    llm=llm).answer.text
    return run


def self_rag_method(pipeline, reflector, k: int = 5, config=None) -> Method:
    """Top k → Self-RAG (`ragkit.agent.self_rag.self_rag`)."""

    def run(question: str, llm) -> str:
        if hasattr(reflector, "judge"):
            reflector.judge.llm = llm
        return self_rag(question, _top(pipeline, question, k, config), reflector,
                        llm=llm).answer.text
    return run


def long_context_method(documents) -> Method:
    """The whole of `documents` in one cached prompt (`ragkit.agent.long_context`)."""
    cache: dict[int, LongContext] = {}

    def run(question: str, llm) -> str:
        lc = cache.get(id(llm.client))
        if lc is None:
            lc = cache[id(llm.client)] = LongContext(documents, llm)
        lc.llm = llm
        return lc.ask(question).text
    return run


def agentic_method(root: str | Path, pipeline=None, max_turns: int = 8) -> Method:
    """`ragkit.agent.loop.run_agent` as a method: grep, glob and read_file over `root`, plus
    docs_search over `pipeline` when one is given; the answer is the loop's final text."""
    names = ["grep", "glob", "read_file"] + (["docs_search"] if pipeline is not None else [])
    context = ToolContext(root=Path(root).resolve(), pipeline=pipeline)

    def run(question: str, llm) -> str:
        return run_agent(question, [TOOLS[n] for n in names], context, llm=llm,
                         max_turns=max_turns).answer
    return run


# --------------------------------------------------------------------------- the runs
def _row(query: Query, text: str, usage: Usage, calls: int, seconds: float,
         model: str) -> dict:
    return {"correct": is_correct(query, text), "calls": calls, "input": usage.input,
            "output": usage.output, "cache write": usage.cache_write,
            "cache read": usage.cache_read, "seconds": seconds, "$": cost(usage, model)}


def run_method(method: Method, queries: Sequence[Query], client=None, cache=False,
               model: str = "claude-haiku-4-5", bar=None) -> pd.DataFrame:
    """One row per question (index: query id) for one method; see the module docstring.
    `bar`, a progress bar, is advanced by one a question."""
    client = client or make_client()
    rows = {}
    for query in queries:
        if bar is not None:
            bar.update(1)
        log = UsageLog()
        llm = LLM(client, cache=cache, usage=log)
        start = time.perf_counter()
        text = method(query.text, llm)
        seconds = time.perf_counter() - start
        usage = sum((r.spent + r.saved for r in log.models.values()), Usage())
        calls = sum(r.requests + r.cache_hits for r in log.models.values())
        rows[query.id] = _row(query, text, usage, calls, seconds, model)
    return pd.DataFrame.from_dict(rows, orient="index")


def run_methods(methods: Mapping[str, Method | None], queries: Sequence[Query], client=None,
                cache=False, progress: bool = False) -> dict[str, pd.DataFrame | None]:
    """`run_method` for each named method (None: not available, kept as a labelled gap);
    with `progress` a bar counts the questions of all the methods (notebook 07's five
    methods ran a minute in silence on a first run)."""
    runnable = sum(m is not None for m in methods.values())
    with progress_bar(total=runnable * len(queries), desc="questions", unit="question",
                      disable=not progress) as bar:
        return {name: None if m is None else run_method(m, queries, client, cache, bar=bar)
                for name, m in methods.items()}


def rounded(table: pd.DataFrame) -> pd.DataFrame:
    """A comparison table for display: dollars to 3 significant digits, seconds to 3
    decimals, tokens per query whole (2700, not 2699.9), the rest to 1
    (`ragkit.evaluate.round_metrics`). For showing only; recorded numbers stay unrounded."""
    out = round_metrics(table)
    if "seconds" in table.columns:
        out["seconds"] = table["seconds"].round(3)
    return out


def versus(value: float, other: float, digits: int = 1) -> str:
    """"above", "below" or "level with": how `value` compares with `other` at the precision
    the tables show (`digits` decimals), so a notebook's finding reads true for any run."""
    a, b = round(float(value), digits), round(float(other), digits)
    return "above" if a > b else "below" if a < b else "level with"


def _uncached(mean: pd.Series, model: str) -> float:
    """Dollars per query of the mean usage `mean` with every prompt token at the input price:
    the mean tokens as they are, not cut to whole tokens (a method that caches nothing showed
    $0.000707 uncached beside its $0.000709)."""
    means = Usage(*(float(mean[k]) for k in ("input", "output", "cache write", "cache read")))
    return uncached_cost(means, model)  # pricing's formula, on fractional mean counts


def comparison_table(runs: Mapping[str, pd.DataFrame | None],
                     cached_prefix: Mapping[str, int] | None = None,
                     model: str = "claude-haiku-4-5") -> pd.DataFrame:
    """Per method: accuracy %, calls (answers and verdicts asked of Claude, or offline of the
    stand-in), input/output tokens, seconds per query and the projected dollars per query
    (`$/query`), with caching for `cached_prefix` methods; `$/query uncached` beside it only
    when a method caches (a prefix, or cache reads and writes in its usage): where none did,
    the column repeated `$/query` under a name that promised a difference."""
    rows, caches = {}, False
    for name, table in runs.items():
        if table is None:
            rows[name] = {}
            continue
        n = len(table)
        mean = table.mean(numeric_only=True)
        row = {"accuracy %": 100 * table["correct"].mean(), "calls": mean["calls"],
               "input tokens": mean["input"], "output tokens": mean["output"],
               "seconds": mean["seconds"], "$/query": mean["$"]}
        prefix = (cached_prefix or {}).get(name)
        caches = caches or bool(prefix or mean["cache write"] or mean["cache read"])
        if prefix and not (mean["cache write"] or mean["cache read"]):
            projection = project_cost(prefix, max(int(mean["input"]) - prefix, 0),
                                      int(mean["output"]), n, model)
            row["$/query"] = projection.cached_per_query
        row["$/query uncached"] = _uncached(mean, model)
        rows[name] = row
    table = pd.DataFrame.from_dict(rows, orient="index")
    return table if caches else table.drop(columns="$/query uncached", errors="ignore")
