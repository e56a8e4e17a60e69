"""Evaluation data sets in the formats users bring, recognised by their files.

- the shipped corpus: `corpus/` (a folder of documents) + `golden/*.jsonl`;
- Anthropic's contextual-embeddings cookbook: `codebase_chunks.json` + `evaluation_set.jsonl`
  (its own chunks are kept; a document's title is the file path from the eval metadata);
- BEIR: `corpus.jsonl`, `queries.jsonl`, `qrels/<split>.tsv`;
- a documents JSONL file alone (no queries: fine for `ragkit index`).
"""
from __future__ import annotations

import csv
import json
from pathlib import Path

from ragkit.documents import (Chunk, Dataset, Document, Golden, Query, RagkitError, check_golden,
                              check_text, load_documents_jsonl, load_folder, load_golden,
                              read_jsonl, require, where)


def load_shipped(root: Path | str) -> Dataset:
    """The project's own data: `corpus/` (a folder of documents) and `golden/*.jsonl`."""
    root = Path(root)
    documents = load_folder(root / "corpus")
    queries = load_golden(root / "golden")
    check_golden(queries, documents, root / "golden")
    return Dataset(root.name, documents, queries)


def _cookbook_titles(rows: list[tuple[int, dict]]) -> dict[str, str]:
    """Map a document uuid to `repo: path`, read from the eval set's per-query metadata."""
    titles = {}
    for _, obj in rows:
        meta = obj.get("meta") or {}
        for uuid in obj.get("golden_doc_uuids", []):
            if meta.get("relative_path"):
                titles[uuid] = f"{meta.get('repo_name', '')}: {meta['relative_path'].lstrip('/')}"
    return titles


def load_cookbook(root: Path | str) -> Dataset:
    """Anthropic's cookbook data set, with its own chunks and golden chunk ids."""
    root = Path(root)
    chunks_path, eval_path = root / "codebase_chunks.json", root / "evaluation_set.jsonl"
    try:
        raw = json.loads(chunks_path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise RagkitError(f"{chunks_path}: cannot read ({exc})") from None
    rows = list(read_jsonl(eval_path))
    titles = _cookbook_titles(rows)
    documents, chunks, chunk_of = [], [], {}
    for i, entry in enumerate(raw):
        doc_id, uuid = entry["doc_id"], entry["original_uuid"]
        text = check_text(entry["content"], chunks_path, None, f"[{i}].content")
        documents.append(Document(doc_id, text, titles.get(uuid, ""), {"uuid": uuid}))
        cursor = 0
        for part in entry["chunks"]:
            start = text.find(part["content"], cursor)
            start = start if start >= 0 else max(text.find(part["content"]), 0)
            end = cursor = start + len(part["content"])
            chunks.append(Chunk(part["chunk_id"], doc_id, part["content"], "", start, end,
                                {"original_index": part["original_index"]}))
            chunk_of[(uuid, part["original_index"])] = (doc_id, part["chunk_id"])
    queries = []
    for line, obj in rows:
        golden = []
        for uuid, index in require(obj, "golden_chunk_uuids", list, eval_path, line):
            if (uuid, index) not in chunk_of:
                raise RagkitError(f"{where(eval_path, line, 'golden_chunk_uuids')}: "
                                  f"no chunk {index} of document {uuid}")
            doc_id, chunk_id = chunk_of[(uuid, index)]
            golden.append(Golden(doc_id, chunk_id=chunk_id))
        text = require(obj, "query", str, eval_path, line, non_empty=True)
        queries.append(Query(f"q{line}", text, str(obj.get("answer", "")), "code", "",
                             tuple(golden)))
    return Dataset(root.name, documents, queries, chunks)


def _beir_qrels(path: Path) -> dict[str, list[str]]:
    qrels: dict[str, list[str]] = {}
    with path.open(encoding="utf-8") as handle:
        for line, row in enumerate(csv.reader(handle, delimiter="\t"), start=1):
            if line == 1 and row and row[0] in ("query-id", "query_id", "qid"):
                continue  # header
            if len(row) != 3:
                raise RagkitError(f"{where(path, line)}: expected 3 tab-separated fields "
                                  f"(query-id, corpus-id, score)")
            if not row[2].lstrip("-").isdigit():
                raise RagkitError(f"{where(path, line, 'score')}: not an integer")
            if int(row[2]) > 0:
                qrels.setdefault(row[0], []).append(row[1])
    return qrels


def load_beir(root: Path | str, split: str = "test") -> Dataset:
    """A BEIR data set; queries without judgments in `qrels/<split>.tsv` are dropped."""
    root = Path(root)
    documents = []
    seen = set()
    for line, obj in read_jsonl(root / "corpus.jsonl"):
        ident = str(require(obj, "_id", (str, int), root / "corpus.jsonl", line))
        if ident in seen:
            raise RagkitError(f"{where(root / 'corpus.jsonl', line, '_id')}: duplicate id '{ident}'")
        seen.add(ident)
        text = check_text(require(obj, "text", str, root / "corpus.jsonl", line),
                          root / "corpus.jsonl", line)
        documents.append(Document(ident, text, str(obj.get("title") or ""), {}))
    qrels = _beir_qrels(root / "qrels" / f"{split}.tsv")
    queries = []
    for line, obj in read_jsonl(root / "queries.jsonl"):
        ident = str(require(obj, "_id", (str, int), root / "queries.jsonl", line))
        if ident in qrels:
            text = require(obj, "text", str, root / "queries.jsonl", line, non_empty=True)
            queries.append(Query(ident, text, split=split,
                                 golden=tuple(Golden(d) for d in qrels[ident])))
    check_golden(queries, documents, root / "qrels" / f"{split}.tsv")
    return Dataset(root.name, documents, queries)


def load_dataset(path: Path | str) -> Dataset:
    """Recognise a data set by its files and load it (see the module docstring)."""
    path = Path(path)
    if path.is_file():
        return Dataset(path.stem, load_documents_jsonl(path), [])
    if (path / "codebase_chunks.json").is_file():
        return load_cookbook(path)
    if (path / "corpus.jsonl").is_file():
        return load_beir(path)
    if (path / "corpus").is_dir() and (path / "golden").is_dir():
        return load_shipped(path)
    if path.is_dir():
        return Dataset(path.name, load_folder(path), [])
    raise RagkitError(f"{path}: no such file or folder")
