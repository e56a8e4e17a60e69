"""How an index is built (`IndexConfig`) and how a query is answered (`SearchConfig`).

What it is: the two frozen records a run depends on — the first saved beside every index, the
second named in every table a notebook prints — with the checks that refuse a bad value
before any work. What it is not: the pipeline that uses them (`ragkit.pipeline`).
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from numbers import Integral, Real

from ragkit.documents import RagkitError

MODES = ("bm25", "dense", "hybrid")
# The offline default embedder (`ragkit.embed.get_embedder`): multilingual-e5-small, chosen on
# the dev questions of the shipped data and of the held-out scikit-learn set together (see
# `ragkit.rerank.offline`); "auto" (MiniLM, USE for Hangul) was the default before.
DEFAULT_EMBEDDER = "e5-small"
FUSIONS = ("rrf", "weighted", "weighted_rank")  # `ragkit.fusion.fuse`'s methods
MAX_RRF_K = 1_000  # RRF's largest k (`check_rrf_k`)


@dataclass(frozen=True)
class IndexConfig:
    """How an index is built. `embedder=None` builds a BM25-only index.

    `context_model` and `context_prompt` (the chunk instruction; None = Anthropic's) are
    used by the `claude` contextualizer only; None model = its default.

    `parent_child` (the 2026 RAG best-practice notes, for long technical documents): the
    `chunk_size` chunks become parents, each split into `child_size`-token children (overlap
    child_size // 8) that are contextualized and indexed; search matches children and answers
    read their parents.
    """

    chunk_size: int = 512
    overlap: int = 64
    contextualizer: str = "structural"
    tokenizer: str = "auto"
    embedder: str | None = DEFAULT_EMBEDDER
    window: int = 96
    context_model: str | None = None
    context_prompt: str | None = None
    parent_child: bool = False
    child_size: int = 128

    def __post_init__(self) -> None:
        for item in fields(self):  # `chunk_size="512"` was a TypeError deep in chunking
            value = getattr(self, item.name)
            wrong = field_error(item.name, value, sizes=False)
            if wrong:  # (a size out of range: chunking's own line says which rule)
                raise RagkitError(f"IndexConfig {item.name}: {wrong}")
            if type(value).__module__ == "numpy":  # its own int or bool, which JSON can save
                object.__setattr__(self, item.name, value.item())


def field_error(name: str, value: object, sizes: bool = True) -> str | None:
    """What is wrong with `value` for IndexConfig field `name` (its default's type, None
    where the default is None and for `embedder`; with `sizes`, a number of tokens ≥ 1,
    `overlap` ≥ 0), or None. Shared with index.json's check (`index_checks.read_config`)."""
    default = {item.name: item.default for item in fields(IndexConfig)}[name]
    kind = type(default) if default is not None else str
    optional = default is None or name == "embedder"
    if kind is bool and type(value).__module__ == "numpy" and "bool" in type(value).__name__:
        return None  # numpy's bool
    if not ((value is None and optional) or (isinstance(value, Integral if kind is int else kind)
                                             and (kind is not int or not isinstance(value, bool)))):
        return (f"expected {'a whole number' if kind is int else kind.__name__}"
                f"{' or null' if optional else ''}, got {value!r:.40}")
    if sizes and kind is int and value < (0 if name == "overlap" else 1):  # type: ignore
        return f"expected a number of tokens, got {value}"
    return None


# The reranker `ragkit search`, `eval` and `ask` apply to a hybrid search unless told
# otherwise (measured: `ragkit.rerank.offline`, benchmarks/bench_rerank.py). Not
# `SearchConfig`'s own default: a config built in code states its reranker.
DEFAULT_RERANK = "offline"


@dataclass(frozen=True)
class SearchConfig:
    """How a query is answered: retrievers, fusion, candidate depth per retriever, reranker.

    The default — min-max normalised scores, dense 0.6 / BM25 0.4 — is the best dense weight
    for the e5-small first stage on dev (the shipped dev split + the held-out scikit-learn dev
    half, 147 questions; `ragkit tune`, `benchmarks/bench_transfer.py`): Pass@5 84.4 against
    84.0 at 0.5 and at 0.7 (shipped dev alone: 85.1, tied with 0.7 and 0.8, chosen on 14 % of
    bootstrap resamples, 95 % range 0.1 … 0.9 — a broad hill; the same 0.6 was best for MiniLM
    before). RRF with k = 5 reaches 86.4 Pass@5 on that dev but a lower MRR on dev and on all
    three reported sets (shipped test .787 vs .810, cookbook .719 vs .727, held-out .696 vs
    .743), and under the offline reranker it loses dev's leave-one-kind-out MRR (.807 vs
    .826), so weighted stays the default — tune α or RRF's k on your own labelled queries.
    `candidates` is how deep each retriever's list goes before fusion (items tied with the
    last one are kept too; a k past it continues below, `fusion.fuse_deep`). `rrf_k` is
    RRF's k (fusion "rrf" only). `rerank` names a reranker (`ragkit.rerank.get_reranker`;
    "none" = off) that reorders the first stage's top `rerank_candidates` whatever k is — at
    most: a hybrid first stage offers the fusion of each list's top `candidates` (the union
    of two top-100 lists, often fewer than 150), as the reranker was fitted;
    off by default here, so a config states it.
    """

    mode: str = "hybrid"
    fusion: str = "weighted"
    weights: dict[str, float] = field(default_factory=lambda: {"dense": 0.6, "bm25": 0.4})
    candidates: int = 100
    rerank: str = "none"
    rerank_candidates: int = 150
    rrf_k: int = 60

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise RagkitError(f"unknown mode '{self.mode}' (known: {', '.join(MODES)})")
        if self.fusion not in FUSIONS:
            raise RagkitError(f"unknown fusion '{self.fusion}' (known: {', '.join(FUSIONS)})")
        check_positive(self.candidates, "candidates")
        check_positive(self.rerank_candidates, "rerank_candidates")
        check_rrf_k(self.rrf_k, "rrf_k")
        # a copy: a sweep changing one dict between configs gave every config its last values
        object.__setattr__(self, "weights", check_weights(self.weights))


def check_weights(weights: object) -> dict[str, float]:
    """The fusion weights as a new dict {"dense": w, "bm25": w}; anything else is refused in
    one line: another key ("sparse" searched with both at 1.0), a missing one, a weight
    that is no finite number ≥ 0 (a string failed nine calls deep), or all of them 0."""
    keys = ("dense", "bm25")
    if not isinstance(weights, Mapping) or sorted(weights) != sorted(keys):
        raise RagkitError(f"weights must give exactly {' and '.join(keys)}, e.g. "
                          f"{{'dense': 0.6, 'bm25': 0.4}}; got {weights!r}")
    for name in keys:
        value = weights[name]
        if isinstance(value, bool) or not isinstance(value, Real) or not (
                math.isfinite(value) and value >= 0):
            raise RagkitError(f"weights['{name}'] must be a number ≥ 0, got {value!r}")
    if not any(weights[name] for name in keys):
        raise RagkitError("weights: at least one of dense and bm25 must be above 0")
    return {name: weights[name] for name in keys}


def fetch_depth(top: int, depth: int) -> int:
    """How deep each retriever's list must reach for a hybrid top `top` fused from `depth`
    (`fusion.fused_deep`): `depth` doubled until it is `top` or more (a fusion of lists d deep
    holds d items or more)."""
    while depth < top:
        depth *= 2
    return depth


def query_texts(texts: object) -> list[str]:
    """The query texts of a search as a list; one string (each of its characters was
    searched as a query), an item that is no text (None failed deep in BM25) or no list at
    all is refused in one line. Any iterable is read once: a generator was consumed by BM25
    and the dense side searched nothing, `[]` with no word."""
    if isinstance(texts, str):
        raise RagkitError("search takes a list of query texts, got one string; give [text]")
    try:
        out = list(texts)  # type: ignore[call-overload]
    except TypeError:
        raise RagkitError(f"search takes a list of query texts, got {texts!r:.60} "
                          f"({type(texts).__name__})") from None
    for n, text in enumerate(out):
        if not isinstance(text, str):
            raise RagkitError(f"search: query {n} is {text!r:.60} ({type(text).__name__}), "
                              f"not text")
    return out


def check_positive(value, name: str) -> None:
    """Refuse a depth or cutoff that is not a whole number ≥ 1 (top-0 is a mistake)."""
    if isinstance(value, bool) or not isinstance(value, Integral) or value <= 0:
        raise RagkitError(f"{name} must be a positive whole number, got {value!r}")


def check_rrf_k(value, name: str) -> None:
    """Refuse an RRF k that is not a whole number from 1 to `MAX_RRF_K`.

    Why a ceiling: fused scores are ranked at single precision, as trec_eval reads a run
    (the tie rule, `ragkit.fusion`), and a larger k squeezes RRF's scores 1 / (k + r) below
    it. One rank down a list lowers a score by about 1 / (k + r)²; between rank pairs with
    the same sum, (1, 3) against (2, 2), the gap is about 2 / (k + r)³. Single precision
    (a relative 2⁻²³) resolves the latter while k + r stays under about 2,900: with k up to
    1,000, for every rank to 1,900, deeper than the lists a search fuses (100 candidates, 150
    reranked). At k = 10⁶ such pairs tied and were ordered by id, at 10⁹ every document
    did, while the run's scores, written exactly, said otherwise. Why not fuse in double
    precision: it already is; ranking by it would give an order that whoever scores the run
    re-sorts. Well above the k that matter (60 by default; `ragkit tune` sweeps 1 … 200): a
    larger one flattens RRF toward counting the lists holding a document. Left at any k:
    deep rank pairs a ten-millionth apart, ties by the tie rule as in every fusion."""
    check_positive(value, name)
    if value > MAX_RRF_K:
        raise RagkitError(f"{name} must be at most {MAX_RRF_K:,} (beyond it RRF's scores of "
                          f"neighbouring ranks are equal in single precision, where runs are "
                          f"ranked), got {value:,}")
