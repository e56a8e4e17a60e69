"""ragkit: a notebook workbench for retrieval-augmented generation.

The public API, in pipeline order: load documents and queries, chunk, contextualize,
index (BM25 + dense), search (fuse), evaluate.
"""
from ragkit.chunking import ChunkerConfig, chunk_document, chunk_documents
from ragkit.datasets import load_beir, load_cookbook, load_dataset, load_shipped
from ragkit.document_folder import load_folder
from ragkit.documents import (Chunk, Dataset, Document, Golden, Query, RagkitError,
                              load_documents_jsonl, load_queries_jsonl)
from ragkit.evaluate import bootstrap_ci, judge, per_query, summarize
from ragkit.fusion import fuse, rrf, weighted_rank, weighted_scores
from ragkit.pipeline import IndexConfig, Pipeline, SearchConfig, compare

__version__ = "0.1.0"

__all__ = [
    "Chunk", "ChunkerConfig", "Dataset", "Document", "Golden", "IndexConfig", "Pipeline",
    "Query", "RagkitError", "SearchConfig", "bootstrap_ci", "chunk_document", "chunk_documents",
    "compare", "fuse", "judge", "load_beir", "load_cookbook", "load_dataset",
    "load_documents_jsonl", "load_folder", "load_queries_jsonl", "load_shipped", "per_query",
    "rrf", "summarize", "weighted_rank", "weighted_scores",
]
