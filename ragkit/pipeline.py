"""The pipeline object notebooks and the command line hold.

Build: chunk → contextualize → BM25 over the contextualized text + dense vectors of
(context + window) for every window of every chunk; save to a folder. Search: BM25 and/or
dense top candidates → fusion → top k; with a reranker, the fused top `rerank_candidates`
(with each retriever's score and rank) → reranker → top k. Everything a run depends on is
in `IndexConfig`, saved beside the index so a folder always says how it was made, with the
embedder that made the vectors (name, dim, weights fingerprint), checked again on load.

Saving is atomic and safe (`ragkit.index_folder`): the index is written to a temporary folder
next to the target and renamed into place, so an interrupted build never leaves a
half-written index, and a folder that is not an index is never replaced.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from ragkit.chunking import ChunkerConfig, chunk_document
from ragkit.contextualize import get_contextualizer
from ragkit.dense import DenseIndex, windows
from ragkit.documents import Chunk, Document, Query, RagkitError, where
from ragkit.evaluate import per_query, summary_table
from ragkit.fusion import Ranking, fuse
from ragkit.index_folder import (FORMAT_VERSION, check_embedder, describe, embedder_record,
                                 is_index, read_bm25, read_chunks, read_dense, read_manifest,
                                 write_index)
from ragkit.lexical import BM25
from ragkit.rerank import Candidate, RerankStage, get_reranker

__all__ = ["FORMAT_VERSION", "IndexConfig", "Pipeline", "SearchConfig", "compare",
           "evaluate_configs", "is_index"]
MODES = ("bm25", "dense", "hybrid")


@dataclass(frozen=True)
class IndexConfig:
    """How an index is built. `embedder=None` builds a BM25-only index.

    `context_model` and `context_prompt` (the chunk instruction; None = Anthropic's) are
    used by the `claude` contextualizer only; None model = its default.
    """

    chunk_size: int = 512
    overlap: int = 64
    contextualizer: str = "structural"
    tokenizer: str = "auto"
    embedder: str | None = "minilm"
    window: int = 96
    context_model: str | None = None
    context_prompt: str | None = None


@dataclass(frozen=True)
class SearchConfig:
    """How a query is answered: retrievers, fusion, candidate depth per retriever, reranker.

    The default — min-max normalised scores, dense 0.6 / BM25 0.4 — was the best or within
    a point of it on both the shipped dev split and Anthropic's cookbook set; RRF lost
    Korean questions at k = 5, where the English MiniLM ranks poorly (see the README).
    `rerank` names a reranker (`ragkit.rerank.get_reranker`; "none" = off) that reorders the
    first stage's top `rerank_candidates`; off by default here, so a config states it.
    """

    mode: str = "hybrid"
    fusion: str = "weighted"
    weights: dict[str, float] = field(default_factory=lambda: {"dense": 0.6, "bm25": 0.4})
    candidates: int = 100
    rerank: str = "none"
    rerank_candidates: int = 150

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise RagkitError(f"unknown mode '{self.mode}' (known: {', '.join(MODES)})")
        if self.rerank_candidates < 1:
            raise RagkitError(f"rerank_candidates must be at least 1, got "
                              f"{self.rerank_candidates}")


def _embed_chunks(embedder, chunks: Sequence[Chunk], window: int, progress: bool
                  ) -> DenseIndex:
    texts, owners = [], []
    for position, chunk in enumerate(chunks):
        prefix = f"{chunk.context}\n\n" if chunk.context else ""
        for piece in windows(chunk.text, window, window // 2):
            texts.append(prefix + piece)
            owners.append(position)
    vectors = embedder.embed(texts, input_type="document", progress=progress)
    return DenseIndex(vectors, np.array(owners))


class Pipeline:
    """A built index: chunks, BM25, optional dense vectors, and the config that made them.

    `embedder_record` describes the embedder that made `dense` (see `index_folder`); an
    `embedder` given here must match it.
    """

    def __init__(self, config: IndexConfig, chunks: list[Chunk], bm25: BM25,
                 dense: DenseIndex | None, embedder=None,
                 embedder_record: dict[str, Any] | None = None) -> None:
        self.config, self.chunks, self.bm25, self.dense = config, chunks, bm25, dense
        self.embedder_record = embedder_record
        if embedder is not None and dense is not None:
            check_embedder(embedder, embedder_record, dense)
        self._embedder = embedder
        self.rerank_stages: dict[str, RerankStage] = {}  # by reranker name, with its counts

    # ------------------------------------------------------------------ build
    @classmethod
    def build(cls, documents: Sequence[Document], config: IndexConfig = IndexConfig(),
              chunks: Sequence[Chunk] | None = None, progress: bool = True,
              embedder=None) -> "Pipeline":
        """Chunk (unless `chunks` are given), contextualize, and index `documents`.

        `embedder` overrides the one named in the config (any object with the
        `ragkit.embed.Embedder` interface, e.g. a custom model); it is what `save` records.
        """
        chunker = ChunkerConfig(config.chunk_size, config.overlap)
        contextualize = get_contextualizer(config.contextualizer, config.context_model,
                                           config.context_prompt)
        given: dict[str, list[Chunk]] = {}
        for chunk in chunks or ():
            given.setdefault(chunk.doc_id, []).append(chunk)
        pairs = [(doc, (given.get(doc.id) if chunks is not None
                        else chunk_document(doc, chunker)) or []) for doc in documents]
        if hasattr(contextualize, "many"):
            done = contextualize.many(pairs, progress=progress)
        else:
            done = [contextualize(doc, doc_chunks) for doc, doc_chunks in
                    tqdm(pairs, desc="contextualize", disable=not progress, leave=False)]
        out: list[Chunk] = [chunk for doc_chunks in done for chunk in doc_chunks]
        bm25 = BM25.fit([c.indexed_text for c in out], tokenizer=config.tokenizer)
        pipeline = cls(config, out, bm25, None, embedder)
        if config.embedder:
            pipeline.dense = _embed_chunks(pipeline.embedder, out, config.window, progress)
            pipeline.embedder_record = embedder_record(pipeline.embedder)
        return pipeline

    @property
    def embedder(self):
        """The query/document embedder: the one given, else the registered one named in the
        config (built on first use and checked against the one the index was made with)."""
        if self._embedder is None:
            if not self.config.embedder:
                raise RagkitError("this index has no dense vectors (built with embedder none); "
                                  "use mode 'bm25' or rebuild with an embedder")
            from ragkit.embed import EMBEDDERS, get_embedder
            if self.dense is not None and self.config.embedder not in EMBEDDERS:
                made = (describe(self.embedder_record) if self.embedder_record
                        else repr(self.config.embedder))
                raise RagkitError(f"this index was built with the in-code embedder {made}, "
                                  f"which is not registered; pass it: Pipeline.load(folder, "
                                  f"embedder=...), or search with mode 'bm25'")
            embedder = get_embedder(self.config.embedder)
            if self.dense is not None:
                check_embedder(embedder, self.embedder_record, self.dense)
            self._embedder = embedder
        return self._embedder

    # ------------------------------------------------------------------ search
    def _bm25(self, texts: Sequence[str], depth: int) -> list[Ranking]:
        """BM25 candidates; chunks sharing no query term (score 0) are not candidates."""
        return [[(self.chunks[i].id, float(s)) for i, s in zip(idx, scores) if s > 0]
                for idx, scores in self.bm25.search_many(texts, depth)]

    def _dense(self, texts: Sequence[str], depth: int) -> list[Ranking]:
        vectors = self.embedder.embed(list(texts), input_type="query")
        return [[(self.chunks[i].id, float(s)) for i, s in zip(idx, scores)]
                for idx, scores in self.dense.search(vectors, depth)]

    def search(self, texts: Sequence[str], k: int = 20,
               config: SearchConfig = SearchConfig()) -> list[Ranking]:
        """Top-k (chunk id, score) per query text, best first."""
        if config.rerank != "none":
            return self._rerank(texts, k, config)
        depth = max(k, config.candidates)
        if config.mode == "bm25":
            return [r[:k] for r in self._bm25(texts, k)]
        if config.mode == "dense":
            return [r[:k] for r in self._dense(texts, k)]
        sparse, dense = self._bm25(texts, depth), self._dense(texts, depth)
        return [fuse({"dense": d, "bm25": s}, config.fusion, config.weights, top=k)
                for d, s in zip(dense, sparse)]

    def _rerank(self, texts: Sequence[str], k: int, config: SearchConfig) -> list[Ranking]:
        """First-stage top `rerank_candidates` → the reranker (failures fall back) → top k."""
        stage = self.rerank_stage(config.rerank)
        if k > len(self.chunks):
            raise RagkitError(f"k = {k} is larger than the index ({len(self.chunks)} chunks); "
                              f"ask for at most {len(self.chunks)}")
        return [stage(text, found, k)
                for text, found in zip(texts, self.candidates(texts, config, k))]

    def candidates(self, texts: Sequence[str], config: SearchConfig = SearchConfig(),
                   k: int = 0) -> list[list[Candidate]]:
        """The first stage's top max(k, `rerank_candidates`) per query as `Candidate`s, each
        with the score and 1-based rank every retriever gave it (see `Candidate.signals`).

        Each retriever is searched as deep as without reranking, so the candidates' order
        is exactly the unreranked ranking, continued.
        """
        depth, top = max(k, config.candidates), max(k, config.rerank_candidates)
        lists: dict[str, list[Ranking]] = {}
        if config.mode in ("bm25", "hybrid"):
            lists["bm25"] = self._bm25(texts, depth if config.mode == "hybrid" else top)
        if config.mode in ("dense", "hybrid"):
            lists["dense"] = self._dense(texts, depth if config.mode == "hybrid" else top)
        by_id = {c.id: c for c in self.chunks}
        out = []
        for n in range(len(texts)):
            mine = {name: ranked[n] for name, ranked in lists.items()}
            first = (fuse(mine, config.fusion, config.weights, top=top) if len(mine) > 1
                     else next(iter(mine.values()))[:top])
            signals: dict[str, dict[str, float]] = {}
            for name, ranking in mine.items():
                for rank, (ident, score) in enumerate(ranking, start=1):
                    signals.setdefault(ident, {}).update({name: score, f"{name}_rank": rank})
            out.append([Candidate(by_id[i], s, signals.get(i, {})) for i, s in first])
        return out

    def rerank_stage(self, name: str) -> RerankStage:
        """The stage running reranker `name` on this index (made once; it keeps the counts)."""
        if name not in self.rerank_stages:
            reranker = get_reranker(name)
            if hasattr(reranker, "bind"):  # a reranker that reads the index (e.g. offline)
                reranker = reranker.bind(self)
            self.rerank_stages[name] = RerankStage(reranker)
        return self.rerank_stages[name]

    def run(self, queries: Sequence[Query], k: int = 20,
            config: SearchConfig = SearchConfig()) -> dict[str, list[str]]:
        """A run: query id → ranked chunk ids."""
        rankings = self.search([q.text for q in queries], k, config)
        return {q.id: [ident for ident, _ in r] for q, r in zip(queries, rankings)}

    # ------------------------------------------------------------------ disk
    def save(self, folder: Path | str) -> Path:
        """Write the index to `folder`, replacing an existing index there atomically.

        Refuses (RagkitError) a file or a non-empty folder that is not a ragkit index. Vectors
        whose embedder is unknown (loaded from an index that predates the record) are saved
        without an "embedder" key, as they came, rather than with a guess.
        """
        manifest: dict[str, Any] = {"config": asdict(self.config)}
        if self.embedder_record is not None or self.dense is None:
            manifest["embedder"] = self.embedder_record
        return write_index(folder, manifest, self.chunks, self.bm25, self.dense)

    @classmethod
    def load(cls, folder: Path | str, embedder=None) -> "Pipeline":
        """Read and check an index folder written by `save`.

        Checks: index.json (format, version, valid JSON), every chunks.jsonl row, that the
        chunk count, BM25 documents and dense vector owners agree, the vector width, and that
        `embedder` (if given) is the one recorded. Any failure is a RagkitError naming the
        file, line and field.
        """
        folder = Path(folder)
        manifest = read_manifest(folder)
        try:
            config = IndexConfig(**manifest["config"])
        except TypeError as exc:
            raise RagkitError(f"{where(folder / 'index.json', None, 'config')}: {exc}") from None
        chunks = read_chunks(folder / "chunks.jsonl", manifest["chunks"])
        bm25 = read_bm25(folder / "bm25", len(chunks))
        record = manifest.get("embedder")
        dense = read_dense(folder, len(chunks), record["dim"] if record else None)
        if dense is None and (record or config.embedder):
            raise RagkitError(f"{folder / 'dense_vectors.npy'}: missing, but index.json names "
                              f"embedder {(record['name'] if record else config.embedder)!r}")
        return cls(config, chunks, bm25, dense, embedder, record)


def evaluate_configs(pipeline: Pipeline, queries: Sequence[Query], judgments,
                     configs: dict[str, SearchConfig], k: int = 20) -> dict:
    """Per-query metric tables (one DataFrame per named search config) on judged queries."""
    judged = [q for q in queries if q.id in judgments]
    mine = {q.id: judgments[q.id] for q in judged}
    return {name: per_query(pipeline.run(judged, k, cfg), mine) for name, cfg in configs.items()}


def compare(pipeline: Pipeline, queries: Sequence[Query], judgments,
            configs: dict[str, SearchConfig], k: int = 20):
    """One row of mean metrics per named search config, on the judged queries."""
    return summary_table(evaluate_configs(pipeline, queries, judgments, configs, k))
