"""The pipeline object notebooks and the command line hold.

Build: chunk → contextualize → BM25 over the contextualized text + dense vectors of
(context + window) for every window of every chunk; save to a folder. Search: BM25 and/or
dense top candidates → fusion → top k; with a reranker, the fused top `rerank_candidates`
(with each retriever's score and rank) → reranker → top k. Everything a run depends on is
in `IndexConfig`, saved beside the index so a folder always says how it was made, with the
embedder that made the vectors (name, dim, weights fingerprint), checked again on load.

Saving is atomic (`ragkit.index_folder`: a temporary folder renamed into place, never over a
folder that is not an index); loading reads one version while a build replaces it."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from ragkit import index_cache
from ragkit.chunk_rows import gc_paused
from ragkit.chunk_table import chunk_table
from ragkit.config import (MODES, IndexConfig, SearchConfig, check_positive, fetch_depth,
                           query_texts)
from ragkit.dense import DenseIndex, embed_chunks
from ragkit.documents import Chunk, Document, Query, RagkitError
from ragkit.embed import get_embedder, is_registered
from ragkit.fusion import Ranking, continued, fuse_deep, ranked, with_ties
from ragkit.index_checks import read_config
from ragkit.index_folder import (FORMAT_VERSION, check_embedder, describe, embedder_record,
                                 is_index, read_bm25, read_dense, read_manifest, read_parents,
                                 read_stable, write_index)
from ragkit.lexical import BM25
from ragkit.prepare import contextualized_chunks
from ragkit.rerank import Candidate, RerankStage, get_reranker, with_signals
from ragkit.stores import StoreSpec, parse_store
from ragkit.stores import milvus_index
from ragkit.stores.memory import MemoryStore
from ragkit.vectors import vectors_index

__all__ = ["FORMAT_VERSION", "MODES", "IndexConfig", "Pipeline", "SearchConfig", "compare",
           "evaluate_configs", "is_index"]


class Pipeline:
    """A built index: chunks, BM25, optional dense vectors, and the config that made them.
    `embedder_record` describes the embedder that made `dense` (see `index_folder`); an
    `embedder` given here must match it. `store` is where searches go (`ragkit.stores`):
    by default the in-memory `bm25` and `dense` here; a Milvus-backed index (loaded from a
    folder written with `save(folder, store="milvus")`) has `dense` None and a `bm25`
    holding only the vocabulary and idf, its postings and vectors living in Milvus.
    """

    def __init__(self, config: IndexConfig, chunks: Sequence[Chunk], bm25: BM25,
                 dense: DenseIndex | None, embedder=None,
                 embedder_record: dict[str, Any] | None = None,
                 parents: dict[str, Chunk] | None = None, store=None) -> None:
        self.config, self.chunks, self.bm25, self.dense = config, chunks, bm25, dense
        self.embedder_record = embedder_record
        self.parents = parents or {}  # child chunk id → parent chunk (parent–child indexes)
        if embedder is not None and dense is not None:
            check_embedder(embedder, embedder_record, dense)
        self._embedder = embedder
        self.store = store if store is not None else MemoryStore(self)
        self.rerank_stages: dict[str, RerankStage] = {}  # by reranker name, with its counts

    # ------------------------------------------------------------------ build
    @classmethod
    def build(cls, documents: Sequence[Document], config: IndexConfig = IndexConfig(),
              chunks: Sequence[Chunk] | None = None, progress: bool = True,
              embedder=None, vectors=None, vectors_path: Path | str = "vectors") -> "Pipeline":
        """Chunk (unless `chunks` are given), contextualize, and index `documents`.

        `embedder` overrides the one named in the config (any object with the
        `ragkit.embed.Embedder` interface, e.g. a custom model, or a registered name); it is
        what `save` records.
        `vectors` (a 2-d float array, `ragkit.vectors.read_vectors`) are precomputed dense
        vectors, one row per indexed chunk in chunk order, used instead of embedding the
        chunks; the config's embedder then embeds queries only (`vectors_path` names the
        source in errors). Under `ragkit cookbook` an index already built in the same run is
        loaded instead (`ragkit.index_cache`).
        """
        embedder = get_embedder(embedder) if isinstance(embedder, str) else embedder  # a name
        shared = index_cache.folder()
        if (embedder is None and vectors is None and shared is not None
                and index_cache.cacheable(config)):
            return index_cache.build_once(cls._build, cls.load, shared, documents, config,
                                          chunks, progress)
        return cls._build(documents, config, chunks, progress, embedder, vectors, vectors_path)

    @classmethod
    def _build(cls, documents: Sequence[Document], config: IndexConfig,
               chunks: Sequence[Chunk] | None, progress: bool, embedder, vectors=None,
               vectors_path: Path | str = "vectors") -> "Pipeline":
        """What `build` does when no shared index serves it: text side, then vectors; the
        embedder's `prepare` (Voyage: its key) runs before a paid context, not after them."""
        embeds = vectors is None and bool(config.embedder)
        embedder = get_embedder(config.embedder) if embeds and embedder is None else embedder
        ready = getattr(embedder, "prepare", None) if embeds else None
        with gc_paused():
            pipeline = cls._index_text(documents, config, chunks, progress, embedder, ready)
        if vectors is not None:
            if not config.embedder:
                raise RagkitError(f"{vectors_path}: precomputed vectors need the embedder "
                                  f"that embeds the queries (not embedder none)")
            pipeline.dense = vectors_index(vectors, len(pipeline.chunks), pipeline.embedder,
                                           vectors_path)
        elif config.embedder:
            pipeline.dense = embed_chunks(pipeline.embedder, pipeline.chunks, config.window,
                                          progress)
        if pipeline.dense is not None:
            pipeline.embedder_record = embedder_record(pipeline.embedder)
        return pipeline

    @classmethod
    def _index_text(cls, documents: Sequence[Document], config: IndexConfig,
                    chunks: Sequence[Chunk] | None, progress: bool, embedder,
                    before_send: Callable[[], None] | None = None) -> "Pipeline":
        """Chunks, contexts and BM25 (the part that makes a million small objects)."""
        out, parents = contextualized_chunks(documents, config, chunks, progress, before_send)
        bm25 = BM25.fit((c.indexed_text for c in out), tokenizer=config.tokenizer)
        return cls(config, out, bm25, None, embedder, parents=parents)

    @property
    def embedder(self):
        """The embedder given, else the config's registered one (made on first use, checked)."""
        if self._embedder is None:
            if not self.config.embedder:
                raise RagkitError("this index has no dense vectors (built with embedder none); "
                                  "use mode 'bm25' or rebuild with an embedder")
            if self.has_dense and not is_registered(self.config.embedder):
                made = (describe(self.embedder_record) if self.embedder_record
                        else repr(self.config.embedder))
                raise RagkitError(f"this index was built with the in-code embedder {made}, "
                                  f"which is not registered; pass it: Pipeline.load(folder, "
                                  f"embedder=...), or search with mode 'bm25'")
            embedder = get_embedder(self.config.embedder)
            if self.has_dense:
                check_embedder(embedder, self.embedder_record, self.dense)
            self._embedder = embedder
        return self._embedder

    @property
    def has_dense(self) -> bool:  # dense vectors, in memory or in the store
        return self.store.has_dense

    # ------------------------------------------------------------------ search
    def _bm25(self, texts: Sequence[str], n: int) -> list[Ranking]:  # and ties with the n-th
        return self.store.bm25_tied(texts, n)

    def _dense(self, texts: Sequence[str], depth: int) -> list[Ranking]:
        vectors = self.embedder.embed(list(texts), input_type="query")
        return self.store.dense(vectors, depth)

    def retriever_lists(self, texts: Sequence[str], depth: int) -> list[dict[str, Ranking]]:
        """Per text, {"dense": ..., "bm25": ...}: each retriever's top `depth` (ties at the
        cut included) in the tie-rule order — exactly what hybrid search fuses, so a sweep
        can retrieve once and fuse many times (`ragkit.tune`)."""
        check_positive(depth, "depth")
        sparse = self._bm25(texts, depth)
        dense = with_ties(self._dense, texts, depth)
        return [{"dense": ranked(d), "bm25": ranked(s)} for d, s in zip(dense, sparse)]

    def search(self, texts: Sequence[str], k: int = 20,
               config: SearchConfig = SearchConfig()) -> list[Ranking]:
        """Top-k (chunk id, score) per query text of the list `texts`, in the tie-rule order
        (`ragkit.fusion`); a k past the index returns the whole index (the CLI says so).
        Single-retriever modes rank that retriever's scores; hybrid fuses each retriever's
        top `config.candidates`, ties at either cut included, continued below for a k past
        them (`fusion.fuse_deep`); a reranker reorders the top `rerank_candidates`."""
        texts = query_texts(texts)  # one string, a generator, a None among them: refused
        check_positive(k, "k")
        if not texts:  # a store may refuse an empty search
            return []
        if config.rerank != "none":
            return self._rerank(texts, k, config)
        if config.mode == "bm25":
            return [ranked(r, k) for r in self._bm25(texts, k)]
        if config.mode == "dense":
            return [ranked(r, k) for r in with_ties(self._dense, texts, k)]
        return [self._fused(lists, config, k)
                for lists in self.retriever_lists(texts, fetch_depth(k, config.candidates))]

    @staticmethod
    def _fused(lists: dict[str, Ranking], config: SearchConfig, top: int) -> Ranking:
        return fuse_deep(lists, config.candidates, top, config.fusion, config.weights,
                         config.rrf_k)

    def _rerank(self, texts: Sequence[str], k: int, config: SearchConfig) -> list[Ranking]:
        """First-stage top `rerank_candidates` → the reranker → top k, continued below in the
        first stage's order (`fusion.continued`) when they are fewer than k."""
        stage = self.rerank_stage(config.rerank)
        k = min(k, len(self.chunks))  # as in every mode: a k past the index is the whole index
        out = [stage(text, found, k) for text, found in zip(texts, self.candidates(texts, config))]
        short = [i for i, mine in enumerate(out) if len(mine) < k]  # a k past the candidates
        first = short and self.search([texts[i] for i in short], k, replace(config, rerank="none"))
        for i, deeper in zip(short, first):
            out[i] = continued(out[i], deeper, k)
        return out

    def candidates(self, texts: Sequence[str], config: SearchConfig = SearchConfig(),
                   k: int = 0) -> list[list[Candidate]]:
        """The first stage's top max(k, `rerank_candidates`) per query as `Candidate`s, each
        with the score and 1-based rank every retriever gave it (`Candidate.signals`), in the
        unreranked ranking's order. Hybrid, k ≤ `candidates`: the fusion of each retriever's
        top `candidates`, the pool the offline reranker was fitted on, which can hold fewer
        than `rerank_candidates` (README); a deeper k fetches as `search` does."""
        top = max(k, config.rerank_candidates)
        depth = config.candidates if k <= config.candidates else fetch_depth(k, config.candidates)
        if config.mode == "hybrid":
            per_query = self.retriever_lists(texts, depth)
        else:
            found = (self._bm25(texts, top) if config.mode == "bm25"
                     else with_ties(self._dense, texts, top))
            per_query = [{config.mode: ranked(r)} for r in found]
        by_id = {c.id: c for c in self.chunks}
        return [with_signals(self._fused(mine, config, top) if len(mine) > 1
                             else ranked(next(iter(mine.values())), top), mine, by_id)
                for mine in per_query]

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
    def save(self, folder: Path | str, store: str | StoreSpec | None = None,
             progress: bool = True) -> Path:
        """Write the index to `folder`, replacing an existing index there atomically.

        Refuses (RagkitError) a file or a non-empty folder that is not a ragkit index. Vectors
        of an unknown embedder (an index older than the record) are saved without an
        "embedder" key, not with a guess. `store` ("memory", the default, "milvus" or
        "milvus:URI") says where the searchable rows go (`ragkit.stores`)."""
        spec = parse_store(store)
        if self.store.kind != "memory":
            raise RagkitError("this index lives in Milvus; rebuild it with `ragkit index` "
                              "to write it elsewhere")
        if spec.kind == "milvus":
            return milvus_index.save(self, folder, spec, progress=progress)
        manifest: dict[str, Any] = {"config": asdict(self.config)}
        if self.embedder_record is not None or self.dense is None:
            manifest["embedder"] = self.embedder_record
        parents = list({p.id: p for p in self.parents.values()}.values())
        return write_index(folder, manifest, self.chunks, self.bm25, self.dense, parents)

    @classmethod
    def load(cls, folder: Path | str, embedder=None) -> "Pipeline":
        """Read and check an index folder written by `save`.

        Checks: index.json (format, version, valid JSON), chunks.jsonl against its row offsets
        (`ragkit.chunk_table`: sizes at open, each row when read; without them, every row),
        that the chunk count, BM25 documents and dense vector owners agree, the width, and that
        `embedder` (if given) is the one recorded (`read_stable`: one version during a swap).
        Any failure is a RagkitError naming the file, line and field."""
        embedder = get_embedder(embedder) if isinstance(embedder, str) else embedder  # a name
        return read_stable(Path(folder), lambda: cls._read(Path(folder), embedder))

    @classmethod
    def _read(cls, folder: Path, embedder) -> "Pipeline":
        manifest = read_manifest(folder)
        config = read_config(folder, manifest)
        if isinstance(manifest.get("store"), dict) and manifest["store"].get("kind") == "milvus":
            return milvus_index.load(folder, manifest, config, embedder, cls)
        chunks = chunk_table(folder, manifest["chunks"])  # rows read when asked for
        bm25 = read_bm25(folder / "bm25", len(chunks))
        record = manifest.get("embedder")
        dense = read_dense(folder, len(chunks), record["dim"] if record else None)
        if dense is None and (record or config.embedder):
            raise RagkitError(f"{folder / 'dense_vectors.npy'}: missing, but index.json names "
                              f"embedder {(record['name'] if record else config.embedder)!r}")
        parents = read_parents(folder, manifest, chunks) if config.parent_child else None
        return cls(config, chunks, bm25, dense, embedder, record, parents)


def _metrics():  # `ragkit.evaluate`, imported when first needed
    import ragkit.evaluate  # deferred: pandas (0.2 s), which `ragkit search` never needs
    return ragkit.evaluate


def evaluate_configs(pipeline: Pipeline, queries: Sequence[Query], judgments,
                     configs: dict[str, SearchConfig], k: int = 20) -> dict:
    """Per-query metric tables (one DataFrame per named search config) on judged queries."""
    score_run = _metrics().score_run  # cutoffs up to k: no "Pass@20" of a top-10 list
    judged = [q for q in queries if q.id in judgments]
    mine = {q.id: judgments[q.id] for q in judged}
    return {name: score_run(pipeline.run(judged, k, cfg), mine, k)
            for name, cfg in configs.items()}


def compare(pipeline: Pipeline, queries: Sequence[Query], judgments,
            configs: dict[str, SearchConfig], k: int = 20):
    """One row of mean metrics per named search config, on the judged queries."""
    return _metrics().summary_table(evaluate_configs(pipeline, queries, judgments, configs, k))
