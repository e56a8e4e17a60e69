"""Evaluating runs from files: what `ragkit eval --run` and `ragkit search --level doc` stand on.

What it is: judgments read from qrels, checks that a run and its qrels belong together,
scoring a run a batch of queries at a time, per-query rows for a CSV, and document-level runs
(MaxP over each document's chunks).

What it is not: the metrics themselves (`ragkit.evaluate`, whose `score_run` and `cutoffs`
it passes on), nor reading and writing TREC files (`ragkit.runs`).
"""
from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

import pandas as pd

from ragkit.chunk_table import ChunkTable
from ragkit.documents import Chunk, RagkitError, RagkitWarning
from ragkit.evaluate import Judgments, Run, first_relevant_rank
# with the rest here for `ragkit eval --run`, which imports one module when it scores
from ragkit.evaluate import cutoffs, score_run  # noqa: F401
from ragkit.fusion import ranked
from ragkit.ranking import Ranking
from ragkit.runs import read_trec
from ragkit.text_stats import counted

PER_QUERY_COLUMNS = ("query", "method", "kind", "first_relevant_rank")


def qrels_judgments(relevant: Mapping[str, Sequence[str]]) -> Judgments:
    """Judgments from qrels: each relevant id is one golden item, so Pass@k = 100 · R@k."""
    return {qid: [frozenset({ident}) for ident in ids] for qid, ids in relevant.items() if ids}


def as_judged(run: Path, qrels: Mapping[str, Mapping[str, int]]) -> Run:
    """The ranked ids of the TREC run at `run`, %-decoded as ragkit writes them
    (`ragkit.runs.read_trec`) — or as written, when that spelling matches more of the
    (query, document) pairs `qrels` judge: another tool's run of a BEIR corpus writes the
    corpus id `AT%26T` as it is, and decoded to `AT&T` it was scored as never found (R@20
    0.5 where trec_eval gives 1.0)."""
    try:
        decoded = _ids(read_trec(run))
    except RagkitError:  # `caf%e9`: no escape of ragkit's; as written, or this error
        if not any("%" in doc for docs in qrels.values() for doc in docs):
            raise
        return _ids(read_trec(run, decode=False))
    if not any("%" in doc for docs in qrels.values() for doc in docs):
        return decoded  # no judged id holds a "%": both spellings match alike
    try:
        written = _ids(read_trec(run, decode=False))
    except RagkitError:  # `AT%26T` and `AT&T` both listed: one id twice only decoded
        return decoded
    return written if _hits(written, qrels) > _hits(decoded, qrels) else decoded


def _ids(rankings: Mapping[str, Ranking]) -> Run:
    return {qid: [ident for ident, _ in r] for qid, r in rankings.items()}


def _hits(run: Run, qrels: Mapping[str, Mapping[str, int]]) -> int:
    """The (query, document) pairs of `run` that `qrels` judge."""
    return sum(doc in qrels.get(qid, ()) for qid, docs in run.items() for doc in docs)


def check_run(run: Run, qrels: Mapping[str, Mapping[str, int]], judgments: Judgments,
              run_name: str, qrels_name: str) -> tuple[list[str], list[str]]:
    """How a run and its qrels overlap; refuse the pair when they share nothing.

    Returns (run queries without a relevant judgment — ignored, judged queries the run has
    no results for — scored 0), each non-empty list also announced by a `RagkitWarning`.
    Raises `RagkitError` when no run query is judged, or when the run retrieves none of the
    ids the qrels judge (a chunk-level run against document-level qrels, or another corpus):
    a table of zeros would hide the mistake.
    """
    ignored = sorted(set(run) - set(judgments))
    missing = sorted(set(judgments) - set(run))
    if not judgments:
        raise RagkitError(f"{qrels_name}: no query has a relevant judgment (grade > 0)")
    if len(missing) == len(judgments):
        raise RagkitError(f"{run_name} and {qrels_name} share no query id (run: "
                          f"{_examples(run)}; qrels: {_examples(judgments)})")
    judged_ids = {ident for docs in qrels.values() for ident in docs}
    retrieved = {ident for qid in set(run) & set(judgments) for ident in run[qid]}
    if not retrieved & judged_ids:
        raise RagkitError(f"{run_name} retrieves none of the ids judged in {qrels_name} (run: "
                          f"{_examples(retrieved)}; qrels: {_examples(judged_ids)}); for "
                          f"document-level qrels write the run with `ragkit search --level doc`")
    if ignored:
        warnings.warn(f"{run_name}: ignored {counted(len(ignored), 'query', 'queries')} with "
                      f"no relevant judgment in {qrels_name} ({_examples(ignored)})", RagkitWarning,
                      stacklevel=2)
    if missing:
        warnings.warn(f"{run_name}: no results for "
                      f"{counted(len(missing), 'judged query', 'judged queries')} of "
                      f"{qrels_name}, scored 0 ({_examples(missing)})", RagkitWarning,
                      stacklevel=2)
    return ignored, missing


def _examples(ids, n: int = 3) -> str:
    ids = sorted(ids)
    return ", ".join(ids[:n]) + (", ..." if len(ids) > n else "") if ids else "none"


def first_ranks(run: Run, judgments: Judgments, k: int) -> dict[str, int | None]:
    """Judged query id -> the rank of the first chunk satisfying any of its golden items
    within the top k of its ranking in `run` (None when none is there, or no ranking)."""
    return {qid: first_relevant_rank(list(run.get(qid, ()))[:k], frozenset().union(*items))
            for qid, items in judgments.items()}


def score_batches(runs: Iterable[Run], judgments: Judgments, k: int
                  ) -> tuple[pd.DataFrame, dict[str, int | None]]:
    """`score_run`'s table and `first_ranks` of a run that comes a batch of queries at a
    time, each batch scored and dropped before the next is made: the same rows, in the same
    order, as the whole run gives, without ever holding it. Every judged query must be in
    exactly one batch (a query's metrics are its own; the means are taken over the rows)."""
    tables, ranks = [], {}
    for run in runs:
        mine = {qid: judgments[qid] for qid in run}
        tables.append(score_run(run, mine, k))
        ranks.update(first_ranks(run, mine, k))
    return pd.concat(tables), ranks


def per_query_rows(ranks: Mapping[str, Mapping[str, int | None]],
                   tables: Mapping[str, pd.DataFrame], kinds: Mapping[str, str]
                   ) -> pd.DataFrame:
    """One row per (judged query, method): `PER_QUERY_COLUMNS`, then each metric column.

    `first_relevant_rank` (`ranks[method][query]`, from `first_ranks`) is the rank of the
    first chunk satisfying any golden item within the top k, empty (NA) when none is there —
    the column that shows which questions fail.
    """
    rows = []
    for method, table in tables.items():
        for qid, metrics in table.iterrows():
            rows.append({"query": qid, "method": method, "kind": kinds.get(qid, ""),
                         "first_relevant_rank": ranks[method][qid], **metrics.to_dict()})
    out = pd.DataFrame(rows, columns=[*PER_QUERY_COLUMNS, *next(iter(tables.values())).columns])
    out["first_relevant_rank"] = out["first_relevant_rank"].astype("Int64")
    return out


def is_per_query_csv(path) -> bool:
    """True for a CSV `per_query_rows` wrote (its header starts with `PER_QUERY_COLUMNS`)."""
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.readline().startswith(",".join(PER_QUERY_COLUMNS))
    except (OSError, UnicodeDecodeError):
        return False


def doc_level(ranking: Sequence[tuple[str, float]], doc_of: Callable[[str], str]
              ) -> list[tuple[str, float]]:
    """A chunk ranking as a document ranking: each document once, with its best chunk's score.

    The best-passage score for a document (MaxP; Dai & Callan, SIGIR 2019). `ranking` is best
    first, so a document takes its first chunk's score; documents are then ordered by the
    tie rule (`ragkit.fusion`), as trec_eval will order them in a run file.
    """
    seen: dict[str, float] = {}
    for ident, score in ranking:
        seen.setdefault(doc_of(ident), score)
    return ranked(seen)


def docs_of(chunks: Sequence[Chunk]) -> tuple[Sequence[str], Callable[[str], str]]:
    """(each chunk's document id by position, chunk id -> its document id) for `doc_level`:
    from an index's `ChunkTable` without building every Chunk (its lookup knows the chunks a
    search returned), else from the list."""
    if isinstance(chunks, ChunkTable):
        return chunks.doc_ids(), chunks.doc_of
    return [c.doc_id for c in chunks], {c.id: c.doc_id for c in chunks}.__getitem__


def doc_depth(doc_ids: Sequence[str], k: int) -> int:
    """Chunks to retrieve so their documents fill k places: k × the most chunks of one document.

    Fewer than k documents among that many chunks would need some document to have more
    chunks than the most any has, so this depth always yields k documents when k match.
    Capped at the number of chunks.
    """
    counts: dict[str, int] = {}
    for doc in doc_ids:
        counts[doc] = counts.get(doc, 0) + 1
    return min(len(doc_ids), k * max(counts.values(), default=1))
