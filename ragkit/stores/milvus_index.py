"""An index folder whose rows live in Milvus: writing it (`save`) and opening it (`load`).

The folder holds index.json — the usual manifest plus `"store": {"kind": "milvus", "uri":
null (Milvus Lite file milvus.db here) or the server URI, "collection", "dense_index"}`, never
the token — the BM25 vocabulary and idf in `bm25-KEY/`, and parents.jsonl for a parent–child
index. index.json is written last and atomically: it is the moment the new build becomes the
index (see `ragkit.stores.milvus` for the collection swap).
"""
from __future__ import annotations

import json
import os
import shutil
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ragkit.atomic import check_target, replace_folder, write_text
from ragkit.chunk_rows import chunk_line
from ragkit.documents import Chunk, RagkitError
from ragkit.jsonl import read_json
from ragkit.progress import note
from ragkit.index_folder import (FORMAT, FORMAT_VERSION, WHAT, is_index, read_bm25,
                                 read_parents)
from ragkit.stores import milvus as mv
from ragkit.stores import milvus_rows
from ragkit.stores import milvus_schema as ms
from ragkit.stores.base import StoreSpec


def save(pipeline, folder: Path | str, spec: StoreSpec, batch: int = milvus_rows.BATCH,
         progress: bool = True) -> Path:
    """Write `pipeline` (built in memory) to Milvus and `folder`; resumes an interrupted run.

    A refused or failed build removes the folders it created, unless they hold a Milvus Lite
    database with rows already uploaded: that is kept for the re-run to resume."""
    folder = Path(folder)
    check_target(folder, resumable, WHAT, folder=True, replaced=False)  # written in place
    old = _previous_store(folder)
    ms.check_lengths(pipeline.chunks)
    uri, record_uri = mv.locate(folder, spec.uri)
    if ms.is_lite(uri) and spec.uri is not None:
        ms.check_lite(uri)
    made = _make_folder(folder)
    uploading = False
    try:
        if spec.uri is None:
            ms.check_lite(uri)
        client = ms.connect(uri, mv.token())
        name, key, n_rows, manifest = _collection(client, pipeline, folder, spec, uri)
        uploading = True
        try:
            _upload(client, name, pipeline, n_rows, batch, progress)
        except Exception as exc:  # a full disk under Milvus Lite: one line, not tracebacks
            raise _upload_error(uri, name, exc) from None
        return _finish(client, pipeline, folder, spec, uri, record_uri, name, key, n_rows,
                       manifest, old)
    except BaseException:
        if uploading and progress:
            note(f"ragkit: the build stopped; the rows uploaded so far stay in Milvus at "
                 f"{uri}: run the same command again to resume")
        if made is not None and not (uploading and spec.uri is None):
            if spec.uri is None:
                ms.forget(uri)
            shutil.rmtree(made, ignore_errors=True)
        raise


def _collection(client, pipeline, folder: Path, spec: StoreSpec, uri: str):
    """(name, key, rows, manifest) of the collection this build writes, created unless an
    earlier run of this same build made it (then checked and loaded: a collection opened by
    a new process is released, and the resume's look-ups need it loaded)."""
    dense = pipeline.dense
    dim = dense.vectors.shape[1] if dense is not None else None
    manifest: dict[str, Any] = {"config": asdict(pipeline.config),
                                "embedder": pipeline.embedder_record}
    n_rows = len(dense.owners) if dense is not None else len(pipeline.chunks)
    key = ms.build_key(manifest, pipeline.chunks, n_rows, spec.dense_index)
    name = f"{mv.base_name(folder, spec.uri is None)}_{key}"
    if client.has_collection(name):  # an interrupted or finished run of this same build
        ms.check(client, name, dim, uri)
        client.load_collection(name)
    else:
        ms.create(client, name, dim, spec.dense_index, n_rows)
    return name, key, n_rows, manifest


def _upload(client, name: str, pipeline, n_rows: int, batch: int, progress: bool) -> None:
    """Insert the rows not yet in collection `name`; say so when some already were."""
    before = ms.count_rows(client, name)
    weights = pipeline.bm25.weights.T.tocsr()  # documents × terms
    inserted = milvus_rows.ingest(client, name,
                                  milvus_rows.rows(pipeline.chunks, weights, pipeline.dense),
                                  n_rows, batch, progress, resume=before > 0)
    if before and progress:
        note(f"ragkit: resumed Milvus collection {name}: {n_rows - inserted} of {n_rows} "
             f"rows were already there; uploaded {inserted}")
    client.flush(name)
    client.load_collection(name)


def _finish(client, pipeline, folder: Path, spec: StoreSpec, uri: str, record_uri, name: str,
            key: str, n_rows: int, manifest: dict[str, Any], old) -> Path:
    """Write the vocabulary, parents and index.json (last: the moment the new build becomes
    the index), point the alias at the new collection and drop the previous one."""
    with replace_folder(folder / f"bm25-{key}", lambda _: True, "a BM25 vocabulary") as tmp:
        mv.bm25_model(pipeline.bm25).save(tmp)  # a re-run replaces the live one whole
    parents = list({p.id: p for p in pipeline.parents.values()}.values())
    if parents:
        write_text(folder / "parents.jsonl", "".join(chunk_line(p) + "\n" for p in parents))
    dim = pipeline.dense.vectors.shape[1] if pipeline.dense is not None else None
    store = mv.MilvusStore(client, uri, name, pipeline.chunks, None, dim, spec.dense_index,
                           record_uri)
    manifest = {"format": FORMAT, "version": FORMAT_VERSION, **manifest,
                "chunks": len(pipeline.chunks), "store": {**store.record(), "rows": n_rows},
                **({"parents": len(parents)} if parents else {})}
    write_text(folder / "index.json", json.dumps(manifest, indent=2))  # folder checked above
    _point_alias(client, mv.base_name(folder, spec.uri is None), name)
    mv.drop_old(client, folder, old, name, own_lite=spec.uri is None)
    return folder


def _make_folder(folder: Path) -> Path | None:
    """Create `folder` (and missing parents); the topmost folder created, None if it was
    there. A failure is one line, not a traceback."""
    path = Path(os.path.abspath(folder))
    top = None
    for ancestor in (path, *path.parents):
        if ancestor.exists() or ancestor.is_symlink():
            break
        top = ancestor
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RagkitError(f"{folder}: cannot create ({exc.strerror or exc})") from None
    return top


def resumable(folder: Path) -> bool:
    """True for a ragkit index, or for the folder an interrupted first Milvus Lite build
    left: no index.json, a `milvus.db` folder, and only what that build writes beside it
    (bm25-* vocabularies, parents.jsonl, their temporary files)."""
    folder = Path(folder)
    if is_index(folder):
        return True
    try:
        names = [p.name for p in folder.iterdir()]
    except OSError:
        return False
    return (folder / mv.LITE_FILE).is_dir() and all(
        name == mv.LITE_FILE or name == "parents.jsonl" or name.startswith(("bm25-", "."))
        for name in names) and not (folder / "index.json").exists()


def _previous_store(folder: Path) -> dict[str, Any] | None:
    """The store record of the index at `folder` (None if none); an in-memory index there is
    refused rather than mixed with a Milvus one."""
    if not is_index(folder):
        return None
    store = read_json(folder / "index.json").get("store")
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


def _upload_error(uri: str, name: str, exc: Exception) -> Exception:
    """The one-line RagkitError for Milvus failing while rows go into collection `name`
    (pymilvus's MilvusException, or grpc's RpcError raw), or `exc` itself when it is neither:
    a full disk under Milvus Lite was three tracebacks and exit 1. The rows sent stay, so the
    line says a re-run resumes; a full disk is named as one."""
    import grpc  # deferred: pymilvus's transport, read only on a failure
    from pymilvus.exceptions import MilvusException  # deferred: pymilvus, ~0.7 s
    if not isinstance(exc, (MilvusException, grpc.RpcError)):
        return exc
    full = "no space left" in str(exc).lower()
    return RagkitError(f"Milvus at {uri} stopped the upload into {name}: {ms.reason(exc)}"
                       f"{'; the disk is full: free space and' if full else ';'} run the same "
                       f"command again to resume")
