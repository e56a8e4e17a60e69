"""An index folder whose rows live in Milvus: writing it (`save`) and opening it (`load`).

The folder holds index.json — the usual manifest plus `"store": {"kind": "milvus", "uri":
null (Milvus Lite file milvus.db here) or the server URI, "collection", "dense_index"}`, never
the token — the BM25 vocabulary and idf in `bm25-KEY/`, and parents.jsonl for a parent–child
index. index.json is written last and atomically: it is the moment the new build becomes the
index (see `ragkit.stores.milvus` for the collection swap).
"""
from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ragkit.atomic import check_target, write_text
from ragkit.chunk_rows import chunk_line
from ragkit.documents import Chunk, RagkitError
from ragkit.index_folder import FORMAT, FORMAT_VERSION, WHAT, is_index, read_bm25
from ragkit.stores import StoreSpec
from ragkit.stores import milvus as mv
from ragkit.stores import milvus_rows
from ragkit.stores import milvus_schema as ms


def save(pipeline, folder: Path | str, spec: StoreSpec, batch: int = milvus_rows.BATCH,
         progress: bool = True) -> Path:
    """Write `pipeline` (built in memory) to Milvus and `folder`; resumes an interrupted run."""
    folder = Path(folder)
    check_target(folder, is_index, WHAT, folder=True)
    old = _previous_store(folder)
    folder.mkdir(parents=True, exist_ok=True)
    ms.check_lengths(pipeline.chunks)
    uri, record_uri = mv.locate(folder, spec.uri)
    client = ms.connect(uri, mv.token())
    dense, dim = pipeline.dense, (pipeline.dense.vectors.shape[1] if pipeline.dense is not None
                                  else None)
    manifest: dict[str, Any] = {"config": asdict(pipeline.config),
                                "embedder": pipeline.embedder_record}
    n_rows = len(dense.owners) if dense is not None else len(pipeline.chunks)
    key = ms.build_key(manifest, pipeline.chunks, n_rows, spec.dense_index)
    base = mv.base_name(folder, spec.uri is None)
    name = f"{base}_{key}"
    resume = client.has_collection(name)  # an interrupted run of this same build
    if resume:
        ms.check(client, name, dim, uri)
    else:
        ms.create(client, name, dim, spec.dense_index, n_rows)
    weights = pipeline.bm25.weights.T.tocsr()  # documents × terms
    milvus_rows.ingest(client, name, milvus_rows.rows(pipeline.chunks, weights, dense), n_rows,
                       batch, progress, resume)
    client.flush(name)
    client.load_collection(name)
    mv.bm25_model(pipeline.bm25).save(folder / f"bm25-{key}")
    parents = list({p.id: p for p in pipeline.parents.values()}.values())
    if parents:
        write_text(folder / "parents.jsonl", "".join(chunk_line(p) + "\n" for p in parents))
    store = mv.MilvusStore(client, uri, name, pipeline.chunks, None, dim, spec.dense_index,
                           record_uri)
    manifest = {"format": FORMAT, "version": FORMAT_VERSION, **manifest,
                "chunks": len(pipeline.chunks), "store": {**store.record(), "rows": n_rows},
                **({"parents": len(parents)} if parents else {})}
    write_text(folder / "index.json", json.dumps(manifest, indent=2))  # folder checked above
    _point_alias(client, base, name)
    mv.drop_old(client, folder, old, name)
    return folder


def _previous_store(folder: Path) -> dict[str, Any] | None:
    """The store record of the index at `folder` (None if none); an in-memory index there is
    refused rather than mixed with a Milvus one."""
    if not is_index(folder):
        return None
    store = json.loads((folder / "index.json").read_text(encoding="utf-8")).get("store")
    if not store or store.get("kind") != "milvus":
        raise RagkitError(f"{folder}: holds an in-memory index; write the Milvus index to "
                          f"another folder, or delete this one first")
    return store


def _point_alias(client, alias: str, name: str) -> None:
    """Make `alias` answer for collection `name` (create it, or move it from the old one)."""
    listed = client.list_aliases()
    names = listed.get("aliases", []) if isinstance(listed, dict) else list(listed)
    if alias not in names:
        client.create_alias(name, alias)
    elif alias not in client.list_aliases(name).get("aliases", []):
        client.alter_alias(name, alias)


def load(folder: Path, manifest: dict[str, Any], config, embedder, pipeline_cls):
    """Open a Milvus-backed index folder as a Pipeline (chunks read from the collection)."""
    record = manifest["store"]
    if not isinstance(record, dict) or not isinstance(record.get("collection"), str):
        raise RagkitError(f"{folder / 'index.json'}, field 'store': expected an object with "
                          f"kind, uri and collection")
    spec = mv.spec_of(record)
    uri, _ = mv.locate(folder, spec.uri)
    if spec.uri is None and not Path(uri).exists():
        raise RagkitError(f"{uri}: missing; the index folder is incomplete")
    client = ms.connect(uri, mv.token())
    embedder_rec = manifest.get("embedder")
    dim = embedder_rec["dim"] if embedder_rec else None
    ms.check(client, record["collection"], dim, uri)
    client.load_collection(record["collection"])
    key = record["collection"].rsplit("_", 1)[-1]
    bm25 = read_bm25(folder / f"bm25-{key}", manifest["chunks"])
    chunks = read_chunks(client, record["collection"], manifest["chunks"], uri)
    store = mv.MilvusStore(client, uri, record["collection"], chunks, bm25, dim,
                           spec.dense_index, spec.uri, record.get("rows"))
    parents = None
    if config.parent_child:
        from ragkit.index_folder import read_parents
        parents = read_parents(folder, manifest, chunks)
    return pipeline_cls(config, chunks, bm25, None, embedder, embedder_rec, parents,
                        store=store)


def read_chunks(client, collection: str, expected: int, uri: str) -> list[Chunk]:
    """Every chunk's first row, in chunk order; their number must be index.json's."""
    found: list[Chunk | None] = [None] * expected
    seen = 0
    step = ms.MAX_TOPK  # pages by position (Lite's iterator logs errors); each query walks
    for lo in range(0, expected, step):  # every row in Lite, so pages are as large as allowed
        page = client.query(collection, output_fields=mv._FIELDS,
                            filter=f"window == 0 and position >= {lo} and position < {lo + step}")
        for row in page:
            pos = int(row["position"])
            if found[pos] is not None:
                raise RagkitError(f"Milvus at {uri}: collection {collection!r} holds chunk "
                                  f"position {pos} twice; rebuild the index")
            found[pos] = Chunk(row["chunk_id"], row["doc_id"], row["text"], row["context"],
                               int(row["start"]), int(row["end"]), dict(row["metadata"] or {}))
            seen += 1
    if seen != expected:
        raise RagkitError(f"Milvus at {uri}: collection {collection!r} holds {seen} chunks, "
                          f"but index.json field 'chunks' says {expected}; rebuild the index")
    return found  # type: ignore[return-value]
