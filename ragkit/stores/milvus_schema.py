"""The Milvus collection ragkit writes: its schema, index parameters, checks and connection.

One row per dense window of a chunk (one row per chunk in a BM25-only index). The chunk's
own fields — text, context, metadata, start/end, its ragkit BM25 weights and the text the
built-in BM25 function analyses — are filled on its first row (`window` 0) only; the other
rows carry the window's vector and a placeholder sparse vector (Milvus refuses an empty
one) on a dimension no query uses, so lexical search only ever finds first rows.

Checked facts (Milvus Lite 3.2.2, pymilvus 3.0.2): a BM25-function search returns NEGATIVE
distances, best first (`builtin_sign` turns them into higher = better); aliases work;
`group_by_field` works in search and hybrid_search; VARCHAR holds at most 65,535 bytes.
Source: Milvus docs, "Full Text Search", "Grouping Search", "Manage Aliases".
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ragkit.documents import Chunk, RagkitError
from ragkit.memory import out_of_memory
from ragkit.stores.milvus_lock import open_waiting

FORMAT = "ragkit-milvus"
VERSION = 1
DENSE_INDEXES = ("FLAT", "HNSW", "IVF_FLAT")
VARCHAR_LIMIT = 65_535  # bytes, Milvus's maximum VARCHAR length
ID_LIMIT = 2_048
PLACEHOLDER = 4_294_967_294  # a sparse dimension ragkit's vocabulary never reaches
PLACEHOLDER_WEIGHT = 1e-30
ZERO = 1e-30  # stands for a BM25 weight of exactly 0, which Milvus would drop
MAX_TOPK = 16_384  # Milvus's largest search limit
TIMEOUT = 5.0  # seconds to reach a server before the URI is reported unreachable
_clients: dict[str, Any] = {}


def connect(uri: str, token: str | None = None):
    """A MilvusClient for `uri` (a Lite `.db` path or a server URL), cached per URI.

    Unreachable server, refused token, or Milvus Lite not installed → one RagkitError line.
    """
    uri = _key(uri)
    if uri in _clients:
        return _clients[uri]
    MilvusClient = _client_class()

    def opener():
        return MilvusClient(uri=uri, token=token or "", timeout=TIMEOUT)

    logger = logging.getLogger("pymilvus.decorators")  # logs each failed call with its
    level = logger.level  # traceback, before the one line said below
    try:  # another process may hold a Lite file (this one's clients are all in _clients)
        client = open_waiting(uri, opener) if is_lite(uri) else opener()
        logger.setLevel(logging.CRITICAL)
        client.list_collections(timeout=TIMEOUT)
    except Exception as exc:  # pymilvus raises MilvusException, or grpc's RpcError raw
        error = connect_error(uri, exc)
        if error is exc:
            raise
        raise error from None
    finally:
        logger.setLevel(level)
    _clients[uri] = client
    return client


def _key(uri: str) -> str:
    """`uri` as `_clients` keeps it: one client per Lite database however its path is written
    ("im", "/x/im"; a second client waited on this process's own lock)."""
    return str(Path(uri).resolve()) if is_lite(uri) else uri


def _client_class():
    """pymilvus's MilvusClient, imported with $MILVUS_URI hidden: pymilvus parses that
    variable on import as a server URL and raises on a Lite path, but ragkit reads it itself
    (`ragkit.stores.parse_store`) and always passes the URI explicitly."""
    hidden = {name: os.environ.pop(name) for name in ("MILVUS_URI", "MILVUS_DEFAULT_CONNECTION")
              if name in os.environ}
    try:
        from pymilvus import MilvusClient  # deferred: pymilvus, ~0.7 s, only for Milvus
    except ImportError as exc:
        if out_of_memory(exc):  # installed, but out of memory: not advice to pip install
            raise
        raise RagkitError("the milvus store needs pymilvus and milvus-lite: "
                          "pip install pymilvus milvus-lite") from None
    except Exception as exc:  # pymilvus reads other settings from the environment on import
        raise RagkitError(f"pymilvus cannot start: {reason(exc)}") from None
    finally:
        os.environ.update(hidden)
    return MilvusClient


def is_lite(uri: str) -> bool:
    """True for a Milvus Lite database path (pymilvus's rule: it ends in `.db`)."""
    return uri.endswith(".db") and "://" not in uri


def check_lite(path: str) -> None:
    """Refuse, in one line and before Milvus Lite starts, a Lite database path that cannot
    be created or written: a missing parent folder, a file where a folder must be, a folder
    that refuses writes (read-only file system, immutable). Creates nothing: a probe file
    is made and removed. Why: Milvus Lite itself logs a traceback and pymilvus reports
    only "Open local milvus failed". Milvus Lite 3 keeps a database in a folder."""
    db = Path(path)
    verb = "write" if db.is_dir() else "create"

    def refuse(reason: str) -> None:
        raise RagkitError(f"cannot {verb} the Milvus Lite database {path}: {reason}")

    if db.exists() and not db.is_dir():
        refuse("it is a file, not a Milvus Lite database folder")
    parent = db.parent
    if not db.is_dir():
        if not parent.exists():
            refuse(f"folder {parent} does not exist")
        if not parent.is_dir():
            refuse(f"{parent} is a file, not a folder")
    where = db if db.is_dir() else parent
    try:
        handle, probe = tempfile.mkstemp(prefix=".ragkit-probe-", dir=where)
        os.close(handle)
        os.unlink(probe)
    except OSError as exc:
        refuse(f"cannot write in {where} ({exc.strerror or exc})")


def connect_error(uri: str, exc: Exception) -> Exception:
    """The one-line RagkitError for a failed connection, or `exc` itself when it is not one.

    A refused token reaches us two ways (pymilvus 3.0.2): while connecting, as
    MilvusException "Fail connecting to server ..." caused by a grpc RpcError with status
    UNAUTHENTICATED (`GrpcHandler._wait_for_channel_ready`); after, as that RpcError raw
    (`decorators.error_handler` re-raises it)."""
    import grpc  # deferred: pymilvus's transport, read only on a failed connection
    from pymilvus.exceptions import MilvusException  # deferred: pymilvus, ~0.7 s
    for err in (exc, exc.__cause__):
        if isinstance(err, grpc.RpcError) and callable(getattr(err, "code", None)) and \
                err.code() in (grpc.StatusCode.UNAUTHENTICATED,
                               grpc.StatusCode.PERMISSION_DENIED):
            return RagkitError(f"Milvus at {uri} refused the token (MILVUS_TOKEN): "
                               f"{reason(err)}")
    if isinstance(exc, MilvusException) and is_lite(uri):
        damaged = "" if "Open local milvus failed" in str(exc) else (  # it started: can't read
            f"; the database is damaged: delete {uri} and rebuild the index, or write it to "
            f"another folder")
        if not damaged and Path(uri).is_dir() and not os.access(uri, os.W_OK | os.X_OK):
            damaged = (f"; Milvus Lite writes its database folder even to search (its LOCK "
                       f"file), and {uri} is read-only: make it writable, or copy the index "
                       f"folder somewhere writable")
        return RagkitError(f"cannot open the Milvus Lite database {uri}: {reason(exc)}"
                           f"{damaged}")
    if isinstance(exc, MilvusException):
        text = str(exc).lower()
        if any(word in text for word in ("auth", "token", "credential", "permission",
                                         "denied")):
            return RagkitError(f"Milvus at {uri} refused the token (MILVUS_TOKEN): "
                               f"{reason(exc)}")
        return RagkitError(f"cannot reach Milvus at {uri} within {TIMEOUT:g} s: "
                           f"{reason(exc)}")
    if isinstance(exc, (OSError, RuntimeError, ValueError, grpc.RpcError)):
        return RagkitError(f"cannot open Milvus at {uri}: {reason(exc)}")
    return exc


def reason(exc: Exception) -> str:
    """The failure's own words on one line, at most 200 characters."""
    details = getattr(exc, "details", None)
    message = (details() if callable(details) else None) or getattr(exc, "message", None) \
        or str(exc)
    return " ".join(str(message).split())[:200]


def forget(uri: str) -> None:
    """Close and drop the cached client of `uri` (tests, and before deleting a Lite file)."""
    uri = _key(uri)
    client = _clients.pop(uri, None)
    if client is not None:
        client.close()
    if is_lite(uri):  # stop the embedded server too, so nothing writes into a deleted folder
        try:  # deferred: milvus-lite is optional, and only a Lite database has a server to stop
            from milvus_lite.server_manager import server_manager_instance
        except ImportError:
            return
        server_manager_instance.release_server(uri)


def create(client, name: str, dim: int | None, dense_index: str, n_rows: int) -> None:
    """Create collection `name` with ragkit's schema and indexes, marked with format/version."""
    from pymilvus import DataType, Function, FunctionType  # deferred: pymilvus, ~0.7 s
    schema = client.create_schema(auto_id=False, enable_dynamic_field=False)
    schema.add_field("pk", DataType.VARCHAR, is_primary=True, max_length=ID_LIMIT + 16)
    schema.add_field("chunk_id", DataType.VARCHAR, max_length=ID_LIMIT)
    schema.add_field("doc_id", DataType.VARCHAR, max_length=ID_LIMIT)
    schema.add_field("position", DataType.INT64)
    schema.add_field("window", DataType.INT64)
    schema.add_field("start", DataType.INT64)
    schema.add_field("end", DataType.INT64)
    schema.add_field("text", DataType.VARCHAR, max_length=VARCHAR_LIMIT)
    schema.add_field("context", DataType.VARCHAR, max_length=VARCHAR_LIMIT)
    schema.add_field("lexical", DataType.VARCHAR, max_length=VARCHAR_LIMIT,
                     enable_analyzer=True)
    schema.add_field("metadata", DataType.JSON)
    schema.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
    schema.add_field("builtin", DataType.SPARSE_FLOAT_VECTOR)
    schema.add_function(Function(name="lexical_bm25", function_type=FunctionType.BM25,
                                 input_field_names=["lexical"],
                                 output_field_names=["builtin"]))
    index = client.prepare_index_params()
    index.add_index("sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="IP")
    index.add_index("builtin", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25")
    if dim:
        schema.add_field("vector", DataType.FLOAT_VECTOR, dim=dim)
        index.add_index("vector", index_type=dense_index, metric_type="IP",
                        params=index_params(dense_index, n_rows))
    properties = {"ragkit.format": FORMAT, "ragkit.version": str(VERSION),
                  "ragkit.dim": str(dim or 0), "ragkit.dense_index": dense_index}
    client.create_collection(name, schema=schema, index_params=index,
                             properties=properties, consistency_level="Strong")


def index_params(dense_index: str, n_rows: int) -> dict[str, int]:
    """Build parameters: HNSW M=16, efConstruction=200; IVF nlist ≈ 4·√rows."""
    if dense_index == "HNSW":
        return {"M": 16, "efConstruction": 200}
    if dense_index == "IVF_FLAT":
        return {"nlist": max(1, min(65_536, int(4 * n_rows ** 0.5)))}
    return {}


def search_params(dense_index: str, depth: int) -> dict[str, Any]:
    """Search parameters: HNSW ef ≥ depth (at least 64); IVF nprobe 32; FLAT none."""
    if dense_index == "HNSW":
        return {"metric_type": "IP", "params": {"ef": max(64, depth)}}
    if dense_index == "IVF_FLAT":
        return {"metric_type": "IP", "params": {"nprobe": 32}}
    return {"metric_type": "IP"}


def check(client, name: str, dim: int | None, uri: str) -> dict[str, str]:
    """Refuse a collection that is missing, not ragkit's format/version, or of another dim."""
    if not client.has_collection(name):
        raise RagkitError(f"Milvus at {uri}: no collection {name!r}; rebuild the index "
                          f"with `ragkit index --store ...`")
    info = client.describe_collection(name)
    props = info.get("properties") or {}
    if props.get("ragkit.format") != FORMAT or props.get("ragkit.version") != str(VERSION):
        raise RagkitError(f"Milvus at {uri}: collection {name!r} was made by another ragkit "
                          f"version or format ({props.get('ragkit.format')!r} version "
                          f"{props.get('ragkit.version')!r}; this ragkit reads {FORMAT!r} "
                          f"version {VERSION}); rebuild the index")
    have = {f["name"]: f for f in info["fields"]}
    made = int(have["vector"]["params"]["dim"]) if "vector" in have else 0
    if made != (dim or 0):
        raise RagkitError(f"Milvus at {uri}: collection {name!r} holds {made}-d vectors, but "
                          f"the index records dim {dim or 0}; rebuild the index")
    return props


def count_rows(client, name: str) -> int:
    """Rows in collection `name` (which must be loaded)."""
    rows = client.query(name, filter="", output_fields=["count(*)"])
    return int(rows[0]["count(*)"])


def builtin_sign(distances: list[float]) -> float:
    """+1 when larger BM25-function distances are better, −1 when Milvus returns them
    negated (Milvus Lite 3.2.2 does); read from the order of one result list."""
    return -1.0 if distances and distances[0] < 0 else 1.0


def build_key(manifest: dict[str, Any], chunks: Sequence[Chunk], n_rows: int,
              dense_index: str) -> str:
    """A hash of what the collection will hold: a re-run of the same build resumes into it."""
    digest = hashlib.sha256(json.dumps([VERSION, manifest, n_rows, dense_index],
                                       sort_keys=True, default=str).encode())
    for chunk in chunks:
        digest.update(chunk.id.encode() + b"\0" + chunk.indexed_text.encode() + b"\0")
    return digest.hexdigest()[:12]


def check_lengths(chunks: Sequence[Chunk]) -> None:
    """Refuse (before any write) a chunk whose field exceeds the schema's VARCHAR limit."""
    for chunk in chunks:
        for name, value, limit in (("text", chunk.text, VARCHAR_LIMIT),
                                   ("context", chunk.context, VARCHAR_LIMIT),
                                   ("context + text", chunk.indexed_text, VARCHAR_LIMIT),
                                   ("id", chunk.id, ID_LIMIT), ("doc_id", chunk.doc_id,
                                                                   ID_LIMIT)):
            size = len(value.encode("utf-8"))
            if size > limit:
                raise RagkitError(f"chunk {chunk.id[:80]!r}: field '{name}' is {size} bytes, "
                                  f"longer than Milvus's VARCHAR limit of {limit}; use a "
                                  f"smaller --chunk-size")
