"""The pipeline object notebooks and the command line hold.

Build: chunk → contextualize → BM25 over the contextualized text + dense vectors of
(context + window) for every window of every chunk; save to a folder. Search: BM25 and/or
dense top candidates → fusion → top k. Everything a run depends on is in `IndexConfig`, saved
beside the index so a folder always says how it was made.

Saving is atomic: the index is written to a temporary folder next to the target and renamed
into place, so an interrupted build never leaves a half-written index.
"""
from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from numbers import Integral
from pathlib import Path

import numpy as np
from tqdm import tqdm

from ragkit.chunking import ChunkerConfig, chunk_document
from ragkit.contextualize import get_contextualizer
from ragkit.dense import DenseIndex, windows
from ragkit.documents import Chunk, Document, Query, RagkitError, where
from ragkit.evaluate import per_query, summary_table
from ragkit.fusion import FUSIONS, Ranking, fuse, ranked
from ragkit.lexical import BM25
from ragkit.runs import trec_score

FORMAT_VERSION = 1
MODES = ("bm25", "dense", "hybrid")


@dataclass(frozen=True)
class IndexConfig:
    """How an index is built. `embedder=None` builds a BM25-only index."""

    chunk_size: int = 512
    overlap: int = 64
    contextualizer: str = "structural"
    tokenizer: str = "auto"
    embedder: str | None = "minilm"
    window: int = 96


@dataclass(frozen=True)
class SearchConfig:
    """How a query is answered: retrievers, fusion and candidate depth per retriever.

    The default — min-max normalised scores, dense 0.6 / BM25 0.4 — was the best or within
    a point of it on both the shipped dev split and Anthropic's cookbook set; RRF lost
    Korean questions at k = 5, where the English MiniLM ranks poorly (see the README).
    With the floor below each list's minimum (`ragkit.fusion.normalize`) it gives dev
    94.5 / 96.6 / 99.3 Pass@5/10/20 (MRR 0.781, as plain min-max) and cookbook
    82.7 / 88.1 / 92.5 (MRR 0.714); 0.6 / 0.4 stayed best on dev among 0.4 … 0.8.
    `candidates` is how deep each retriever's list goes before fusion (at least k; items
    tied with the last one are kept too).
    """

    mode: str = "hybrid"
    fusion: str = "weighted"
    weights: dict[str, float] = field(default_factory=lambda: {"dense": 0.6, "bm25": 0.4})
    candidates: int = 100

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise RagkitError(f"unknown mode '{self.mode}' (known: {', '.join(MODES)})")
        if self.fusion not in FUSIONS:
            raise RagkitError(f"unknown fusion '{self.fusion}' (known: {', '.join(FUSIONS)})")
        _check_positive(self.candidates, "candidates")


def _check_positive(value, name: str) -> None:
    """Refuse a depth or cutoff that is not a whole number ≥ 1 (top-0 is a mistake)."""
    if isinstance(value, bool) or not isinstance(value, Integral) or value <= 0:
        raise RagkitError(f"{name} must be a positive whole number, got {value!r}")


def _with_ties(fetch: Callable[[Sequence[str], int], list[Ranking]], texts: Sequence[str],
               n: int) -> list[Ranking]:
    """Each text's top `n` plus every further item tied with its n-th score (tie rule).

    So the tie rule, not the retriever's internal order, decides which tied items make a
    cut: a list that came back full and still tied at its end is fetched again, deeper.
    """
    depth = n + 1  # one more than needed shows whether the n-th score is tied beyond the cut
    results = list(fetch(texts, depth))
    while True:
        open_ = [i for i, r in enumerate(results)
                 if len(r) >= depth and trec_score(r[-1][1]) == trec_score(r[n - 1][1])]
        if not open_:
            break
        depth *= 2
        for i, deeper in zip(open_, fetch([texts[i] for i in open_], depth)):
            results[i] = deeper
    return [r if len(r) <= n else
            [item for item in r if trec_score(item[1]) >= trec_score(r[n - 1][1])]
            for r in results]


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
    """A built index: chunks, BM25, optional dense vectors, and the config that made them."""

    def __init__(self, config: IndexConfig, chunks: list[Chunk], bm25: BM25,
                 dense: DenseIndex | None, embedder=None) -> None:
        self.config, self.chunks, self.bm25, self.dense = config, chunks, bm25, dense
        self._embedder = embedder

    # ------------------------------------------------------------------ build
    @classmethod
    def build(cls, documents: Sequence[Document], config: IndexConfig = IndexConfig(),
              chunks: Sequence[Chunk] | None = None, progress: bool = True,
              embedder=None) -> "Pipeline":
        """Chunk (unless `chunks` are given), contextualize, and index `documents`.

        `embedder` overrides the one named in the config (any object with the
        `ragkit.embed.Embedder` interface, e.g. a custom model).
        """
        chunker = ChunkerConfig(config.chunk_size, config.overlap)
        contextualize = get_contextualizer(config.contextualizer)
        given: dict[str, list[Chunk]] = {}
        for chunk in chunks or ():
            given.setdefault(chunk.doc_id, []).append(chunk)
        out: list[Chunk] = []
        for doc in tqdm(documents, desc="contextualize", disable=not progress, leave=False):
            doc_chunks = given.get(doc.id) if chunks is not None else chunk_document(doc, chunker)
            out.extend(contextualize(doc, doc_chunks or []))
        bm25 = BM25.fit([c.indexed_text for c in out], tokenizer=config.tokenizer)
        pipeline = cls(config, out, bm25, None, embedder)
        if config.embedder:
            pipeline.dense = _embed_chunks(pipeline.embedder, out, config.window, progress)
        return pipeline

    @property
    def embedder(self):
        """The query/document embedder named in the config (loaded on first use)."""
        if self._embedder is None:
            if not self.config.embedder:
                raise RagkitError("this index has no dense vectors (built with embedder none); "
                                  "use mode 'bm25' or rebuild with an embedder")
            from ragkit.embed import get_embedder
            self._embedder = get_embedder(self.config.embedder)
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
        """Top-k (chunk id, score) per query text, in the tie-rule order (`ragkit.fusion`).

        Single-retriever modes rank that retriever's scores; hybrid fuses each retriever's
        top `config.candidates` (at least k), ties at either cut included.
        """
        _check_positive(k, "k")
        if config.mode == "bm25":
            return [ranked(r, k) for r in _with_ties(self._bm25, texts, k)]
        if config.mode == "dense":
            return [ranked(r, k) for r in _with_ties(self._dense, texts, k)]
        depth = max(k, config.candidates)
        sparse = _with_ties(self._bm25, texts, depth)
        dense = _with_ties(self._dense, texts, depth)
        # candidates in the tie-rule order too, so rank-based fusions rank ties by it
        return [fuse({"dense": ranked(d), "bm25": ranked(s)}, config.fusion, config.weights,
                     top=k)
                for d, s in zip(dense, sparse)]

    def run(self, queries: Sequence[Query], k: int = 20,
            config: SearchConfig = SearchConfig()) -> dict[str, list[str]]:
        """A run: query id → ranked chunk ids."""
        rankings = self.search([q.text for q in queries], k, config)
        return {q.id: [ident for ident, _ in r] for q, r in zip(queries, rankings)}

    # ------------------------------------------------------------------ disk
    def save(self, folder: Path | str) -> Path:
        """Write the index to `folder` atomically (temporary folder, then rename)."""
        folder = Path(folder)
        folder.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
        try:
            with (tmp / "chunks.jsonl").open("w", encoding="utf-8") as out:
                for c in self.chunks:
                    out.write(json.dumps({"id": c.id, "doc_id": c.doc_id, "text": c.text,
                                          "context": c.context, "start": c.start, "end": c.end},
                                         ensure_ascii=False) + "\n")
            self.bm25.save(tmp / "bm25")
            if self.dense is not None:
                self.dense.save(tmp)
            manifest = {"format": "ragkit-index", "version": FORMAT_VERSION,
                        "config": asdict(self.config), "chunks": len(self.chunks)}
            (tmp / "index.json").write_text(json.dumps(manifest, indent=2))
            if folder.exists():
                shutil.rmtree(folder)
            tmp.rename(folder)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        return folder

    @classmethod
    def load(cls, folder: Path | str, embedder=None) -> "Pipeline":
        """Read an index folder written by `save`, refusing other formats and versions."""
        folder = Path(folder)
        path = folder / "index.json"
        if not path.is_file():
            raise RagkitError(f"{folder}: not a ragkit index (no index.json)")
        manifest = json.loads(path.read_text())
        if manifest.get("format") != "ragkit-index" or manifest.get("version") != FORMAT_VERSION:
            raise RagkitError(f"{where(path, None, 'version')}: index format "
                              f"{manifest.get('version')!r}, this ragkit reads {FORMAT_VERSION}; "
                              f"rebuild it with `ragkit index`")
        config = IndexConfig(**manifest["config"])
        chunks = []
        with (folder / "chunks.jsonl").open(encoding="utf-8") as handle:
            for line in handle:
                obj = json.loads(line)
                chunks.append(Chunk(obj["id"], obj["doc_id"], obj["text"], obj["context"],
                                    obj["start"], obj["end"]))
        dense = DenseIndex.load(folder) if (folder / "dense_vectors.npy").is_file() else None
        return cls(config, chunks, BM25.load(folder / "bm25"), dense, embedder)


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
