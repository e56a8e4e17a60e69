"""Evaluation data sets in the formats users bring, recognised by their files.

- the shipped layout, also the way to bring your own labelled queries: `corpus/` (a folder
  of text files) or `documents.jsonl`, plus `golden/*.jsonl`;
- Anthropic's contextual-embeddings cookbook: `codebase_chunks.json` + `evaluation_set.jsonl`
  (its own chunks are kept; a document's title is the file path from the eval metadata);
- BEIR: `corpus.jsonl`, `queries.jsonl`, `qrels/<split>.tsv`;
- relevance judgments alone (`read_qrels`): TREC qrels or BEIR TSV, for scoring any run;
- a documents JSONL file alone (no queries: fine for `ragkit index`);
- one PDF, HTML or Word file, or one text or source file (`ONE_FILE_TEXT`), alone: a document
  whose id is its file name, read as a folder reads it (`ragkit.document_folder`).
"""
from __future__ import annotations

import os
import unicodedata
import warnings
from pathlib import Path

from ragkit.document_folder import TEXT_SUFFIXES, load_file_at, load_folder, readable_types
from ragkit.loaders import LOADERS
from ragkit.documents import (Chunk, Dataset, Document, Golden, Query, RagkitError, check_golden,
                              RagkitWarning, check_text, composed, load_documents_jsonl,
                              load_golden, read_jsonl, require, where)
from ragkit.errors import not_a_file
from ragkit.jsonl import JSONL_SUFFIXES, read_json
from ragkit.loaded_folder import warn_beside, without_skipped
from ragkit.outline import one_line
from ragkit.qrels import Qrels, read_qrels, relevant  # noqa: F401 (read from here too)
from ragkit.qrels import judged_at
from ragkit.text_stats import counted


def load_shipped(root: Path | str, skip_bad: bool = False) -> Dataset:
    """Documents and golden queries: `corpus/` (a folder) or `documents.jsonl`, and `golden/`.

    The project's own data uses a `corpus/` folder; a `documents.jsonl` beside `golden/`
    (one `{"id", "text", "title"?, "metadata"?}` per line) lets users label their own corpus.
    `skip_bad` leaves out a bad file of `corpus/` and the questions about it (`without_skipped`).
    A folder holding both is refused (RagkitError): one of them was read without a word.
    """
    root = Path(root)
    jsonl = root / "documents.jsonl"
    if jsonl.is_file() and (root / "corpus").is_dir():
        raise RagkitError(f"{root}: holds both documents.jsonl and corpus/, two sets of "
                          f"documents; keep the one the golden questions are about")
    documents = (load_documents_jsonl(jsonl) if jsonl.is_file()
                 else load_folder(root / "corpus", skip_bad))
    warn_beside(root, "documents.jsonl" if jsonl.is_file() else "corpus/",
                {*LOADERS, *ONE_FILE_TEXT})
    queries = without_skipped(load_golden(root / "golden"), documents, root / "golden")
    return Dataset(root.name, documents, check_golden(queries, documents, root / "golden"))


def _cookbook_titles(rows: list[tuple[int, dict]]) -> dict[str, str]:
    """Map a document uuid to `repo: path`, read from the eval set's per-query metadata."""
    titles = {}
    for _, obj in rows:
        meta = obj.get("meta") or {}
        for uuid in obj.get("golden_doc_uuids", []):
            if meta.get("relative_path"):
                titles[uuid] = f"{meta.get('repo_name', '')}: {meta['relative_path'].lstrip('/')}"
    return titles


def _cookbook_field(path: Path, place: str):
    """A reader of one object's fields in codebase_chunks.json: the field, or one error naming
    the file, the object's place (`[3].chunks[0]`) and the field."""
    def field(obj: object, key: str, kind: type):
        if not isinstance(obj, dict):
            raise RagkitError(f"{path}: {place}: expected an object")
        value = obj.get(key)
        if not isinstance(value, kind) or isinstance(value, bool):
            got = "missing" if key not in obj else f"expected {kind.__name__}, got " \
                                                   f"{type(value).__name__}"
            raise RagkitError(f"{path}: {place}.{key}: {got}")
        return value
    return field


def load_cookbook(root: Path | str) -> Dataset:
    """Anthropic's cookbook data set, with its own chunks and golden chunk ids."""
    root = Path(root)
    chunks_path, eval_path = root / "codebase_chunks.json", root / "evaluation_set.jsonl"
    try:
        raw = read_json(chunks_path)
    except OSError as exc:
        raise RagkitError(f"{chunks_path}: cannot read ({exc.strerror or exc})") from None
    if not isinstance(raw, list):
        raise RagkitError(f"{chunks_path}: expected a JSON list of documents")
    rows = list(read_jsonl(eval_path))
    titles = _cookbook_titles(rows)
    documents, chunks, chunk_of = [], [], {}
    for i, entry in enumerate(raw):
        field = _cookbook_field(chunks_path, f"[{i}]")  # every field checked: it was KeyError,
        doc_id, uuid = field(entry, "doc_id", str), field(entry, "original_uuid", str)  # ...
        text = check_text(field(entry, "content", str), chunks_path, None, f"[{i}].content")
        documents.append(Document(doc_id, text, titles.get(uuid, ""), {"uuid": uuid}))
        cursor = 0
        for j, part in enumerate(field(entry, "chunks", list)):
            part_field = _cookbook_field(chunks_path, f"[{i}].chunks[{j}]")
            content, index = part_field(part, "content", str), part_field(part,
                                                                          "original_index", int)
            start = text.find(content, cursor)
            start = start if start >= 0 else max(text.find(content), 0)
            end = cursor = start + len(content)
            chunks.append(Chunk(part_field(part, "chunk_id", str), doc_id, content, "", start,
                                end, {"original_index": index}))
            chunk_of[(uuid, index)] = (doc_id, chunks[-1].id)
    queries = []
    for line, obj in rows:
        golden = []
        for item in require(obj, "golden_chunk_uuids", list, eval_path, line):
            if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], str)
                    and type(item[1]) is int):
                raise RagkitError(f"{where(eval_path, line, 'golden_chunk_uuids')}: expected "
                                  f"[document uuid, chunk index] pairs, got {item!r:.60}")
            uuid, index = item
            if (uuid, index) not in chunk_of:
                raise RagkitError(f"{where(eval_path, line, 'golden_chunk_uuids')}: "
                                  f"no chunk {index} of document {uuid}")
            doc_id, chunk_id = chunk_of[(uuid, index)]
            golden.append(Golden(doc_id, chunk_id=chunk_id))
        text = require(obj, "query", str, eval_path, line, non_empty=True)
        queries.append(Query(f"q{line}", text, str(obj.get("answer", "")), "code", "",
                             tuple(golden)))
    return Dataset(root.name, documents, queries, chunks)


def beir_splits(root: Path | str) -> list[str]:
    """The splits a BEIR folder has judgments for: the stems of `qrels/*.tsv`."""
    return sorted(p.stem for p in (Path(root) / "qrels").glob("*.tsv"))


def _beir_documents(root: Path | str) -> list[Document]:
    """The documents of a BEIR folder's `corpus.jsonl` alone: its queries and qrels are not
    read (what `ragkit index` needs; a folder without `qrels/*.tsv` is a corpus all the same).
    An `_id` given twice is refused with its line, a file without one document by its name
    (as a documents JSONL is: it was "BM25 needs at least one document", naming nothing)."""
    root = Path(root)
    documents = []
    seen = set()
    for line, obj in read_jsonl(root / "corpus.jsonl"):
        ident = str(require(obj, "_id", (str, int), root / "corpus.jsonl", line))
        if ident in seen:
            raise RagkitError(f"{where(root / 'corpus.jsonl', line, '_id')}: duplicate id "
                              f"'{ident}'")
        seen.add(ident)
        text = check_text(require(obj, "text", str, root / "corpus.jsonl", line),
                          root / "corpus.jsonl", line)  # NFC, as every document ragkit reads
        title = one_line(composed(str(obj.get("title") or "")))  # as documents JSONL's
        documents.append(Document(ident, composed(text), title, {}))
    if not documents:
        raise RagkitError(f"{root / 'corpus.jsonl'}: no documents")
    return documents


def load_beir(root: Path | str, split: str = "test") -> Dataset:
    """A BEIR data set judged by `qrels/<split>.tsv`, or by every `qrels/*.tsv` for `all`.

    With `all` (the files in name order), a query judged in several files is judged by the
    union of the documents they grade relevant, and its `split` names those files joined by
    "+" ("dev+test"): `Dataset.split("test")` of such a set keeps the queries judged in test
    alone, so to score one split, load that split. `judged_by` names the files read.
    Queries without a relevant judgment are dropped. Judged queries missing from
    `queries.jsonl` cannot be asked: they are left out with a `RagkitWarning` that counts them.
    An `_id` given twice in `queries.jsonl` is refused, as in `corpus.jsonl`: scoring would
    keep one of its texts and silently drop the other.
    """
    root = Path(root)
    documents = _beir_documents(root)
    own = {_nfc(d.id): d.id for d in documents}  # a corpus id in NFD is judged by its NFC form
    names = beir_splits(root) if split == "all" else [split]
    if not names:
        # not "(--split all reads every one)": said to an eval or tune not given --split of
        # a folder without judgments (`ragkit index` reads the corpus alone)
        raise RagkitError(f"{root / 'qrels'}: no judgments (no *.tsv file; the queries of a "
                          f"BEIR folder are judged by qrels/SPLIT.tsv)")
    judged, judged_in = _union_qrels(root, names)
    queries = []
    asked: dict[str, int] = {}  # query id -> its line
    for line, obj in read_jsonl(root / "queries.jsonl"):
        ident = str(require(obj, "_id", (str, int), root / "queries.jsonl", line))
        if ident in asked:
            raise RagkitError(f"{where(root / 'queries.jsonl', line, '_id')}: duplicate query "
                              f"id '{ident}' (first at line {asked[ident]})")
        asked[ident] = line
        if (key := _nfc(ident)) in judged:  # qrels ids are read in NFC (`read_qrels`)
            text = require(obj, "text", str, root / "queries.jsonl", line, non_empty=True)
            queries.append(Query(ident, composed(text), split="+".join(judged_in[key]),
                                 golden=tuple(Golden(own.get(d, d)) for d in judged[key])))
    source = root / "qrels" / f"{names[0]}.tsv" if len(names) == 1 else root / "qrels"
    _warn_missing_queries(judged, queries, source, root / "queries.jsonl")
    for query in queries:  # in the qrels' own words, not a golden file's `golden[0].doc_id`
        for doc, path in judged[_nfc(query.id)].items():
            if doc not in own:
                line, field = judged_at(path, _nfc(query.id), doc) or (None, "corpus-id")
                raise RagkitError(f"{where(path, line)}: query '{query.id}': field '{field}': "
                                  f"'{doc}' is not in {root / 'corpus.jsonl'}")
    queries = check_golden(queries, documents, source)
    return Dataset(root.name, documents, queries,
                   judged_by=tuple(f"qrels/{name}.tsv" for name in names))


def _union_qrels(root: Path, names: list[str]
                 ) -> tuple[dict[str, dict[str, Path]], dict[str, list[str]]]:
    """(query id -> each document judged relevant to it in the files `qrels/<name>.tsv`, in
    file order, with the first file judging it; query id -> the names of those files)."""
    judged: dict[str, dict[str, Path]] = {}
    judged_in: dict[str, list[str]] = {}
    for name in names:
        path = root / "qrels" / f"{name}.tsv"
        if not path.is_file():
            raise RagkitError(f"{path}: no such file (splits with qrels: "
                              f"{', '.join(beir_splits(root)) or 'none'})")
        for qid, docs in relevant(read_qrels(path)).items():
            mine = judged.setdefault(qid, {})
            for doc in docs:
                mine.setdefault(doc, path)
            judged_in.setdefault(qid, []).append(name)
    return judged, judged_in


def _nfc(ident: str) -> str:
    return unicodedata.normalize("NFC", ident)


def _warn_missing_queries(judged: dict, queries: list[Query], qrels_path: Path,
                          queries_path: Path) -> None:
    missing = sorted(set(judged) - {_nfc(q.id) for q in queries})
    if missing:
        examples = ", ".join(missing[:5]) + (", ..." if len(missing) > 5 else "")
        warnings.warn(f"{qrels_path}: left out "
                      f"{counted(len(missing), 'judged query', 'judged queries')} not in "
                      f"{queries_path} ({examples})", RagkitWarning, stacklevel=3)


# A file given alone that is one document, as in a folder: a PDF, HTML or Word file, or a
# text or source file; a .jsonl, .json or .ndjson file, or one that opens with "{", is a
# documents JSONL file; any other is refused (`_check_jsonl_or_unknown`).
ONE_FILE_TEXT = TEXT_SUFFIXES - {".json"}


def _check_jsonl_or_unknown(path: Path) -> None:
    """A file of a suffix no loader reads is read as documents JSONL; when its first text does
    not open a JSON object either, say that, not "malformed JSON" (`paper.tex` was
    "paper.tex:1: malformed JSON (Expecting value)")."""
    if path.suffix.lower() in JSONL_SUFFIXES:
        return
    with path.open("rb") as handle:
        head = handle.read(4096).removeprefix(b"\xef\xbb\xbf").lstrip()
    if head and not head.startswith(b"{"):
        raise RagkitError(f"{path}: not a type of file ragkit reads ("
                          f"{readable_types(ONE_FILE_TEXT)}), nor "
                          f"documents JSONL (one JSON object per line)")


def load_dataset(path: Path | str, split: str | None = None, skip_bad: bool = False,
                 queries: bool = True) -> Dataset:
    """Recognise a data set by its files and load it (see the module docstring).

    `split` picks a BEIR folder's `qrels/<split>.tsv` (default `test`, or every one when it has
    no `test.tsv`; `all` reads every one,
    see `load_beir`); other layouts carry the split on each query and ignore it here (use
    `Dataset.split`). `skip_bad` leaves a folder's unreadable files out (`load_folder`; the
    documents list's `skipped` names them). `queries=False` (`ragkit index`) reads a BEIR
    folder's `corpus.jsonl` alone, no query: indexing needs no judgments, and a folder without
    `qrels/*.tsv` was refused; the other layouts load as with `True`.
    """
    path = Path(path)
    if path.name in ("", ".."):  # `ragkit eval .` printed ": 2 judged queries": name it
        path = Path(os.path.abspath(path))
    if path.is_file() and path.suffix.lower() in {*LOADERS, *ONE_FILE_TEXT}:  # one document
        return Dataset(path.stem, [load_file_at(path, path.name)], [])
    if path.is_file():
        _check_jsonl_or_unknown(path)
        try:
            return Dataset(path.stem, load_documents_jsonl(path), [])
        except RagkitError as exc:  # package.json given alone: say how it was read
            if path.suffix.lower() != ".json":
                raise
            raise RagkitError(f"{exc} (a .json file given alone is read as documents JSONL, "
                              f"one {{\"id\", \"text\"}} object per line; to index it as a "
                              f"configuration file, give the folder that holds it)") from None
    if (path / "codebase_chunks.json").is_file():
        return load_cookbook(path)
    if (path / "corpus.jsonl").is_file() and not queries:
        return Dataset(path.name, _beir_documents(path), [])
    if (path / "corpus.jsonl").is_file():
        # no --split: test when judged, else every file ("qrels/test.tsv: no such file")
        return load_beir(path, split or ("test" if "test" in beir_splits(path) else "all"))
    if (path / "golden").is_dir() and ((path / "corpus").is_dir()
                                       or (path / "documents.jsonl").is_file()):
        return load_shipped(path, skip_bad)
    if path.is_dir():
        return Dataset(path.name, load_folder(path, skip_bad), [])
    if path.exists():  # `<(cat docs.jsonl)`, a device: said as it is
        raise not_a_file(path)
    raise RagkitError(f"{path}: no such file or folder")
