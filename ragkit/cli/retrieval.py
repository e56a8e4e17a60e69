"""`ragkit index` and `search`: build an index, search it (scored by cli/scoring.py)."""
from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator
from contextlib import redirect_stdout
from pathlib import Path

from ragkit.atomic import check_target
from ragkit.cli.argtypes import check_stdout, nonempty_path, written_path
from ragkit.cli.options import (Help, add_batch_options, add_index_options, add_search_options,
                                batch_mode, check_same_options, chosen_rerank, clamp_k,
                                claude_contexts, index_config, load_index, print_rerank_summary,
                                print_usage)
from ragkit.cli.fusion import fusion_settings
from ragkit.config import fetch_depth
from ragkit.contextualize.prompts import DEFAULT_MODEL
from ragkit.documents import RagkitError, load_queries_jsonl
from ragkit.folder_watch import watched
from ragkit.index_owner import manifest_of, refuse_inputs_inside, refuse_output_in_index
from ragkit.loaded_folder import kept_in_index
from ragkit.text_stats import counted

SEARCH_HITS = 200_000  # results held at once by `ragkit search` and `eval` (`batch_size`)


def cmd_index(args: argparse.Namespace) -> None:
    with batch_mode(args), watched(args.out):  # another run swapping its index in first
        _index(args)


def _index(args: argparse.Namespace) -> None:
    # deferred: numpy, pandas and scipy load only when a command builds or reads an index
    from ragkit.datasets import load_dataset
    from ragkit.pipeline import Pipeline, is_index
    from ragkit.stores import index_target, parse_store
    if args.allow_removals and not args.update:  # it would do nothing, unsaid
        raise RagkitError("--allow-removals applies to --update (a build without it indexes "
                          "exactly DOCS); add --update, or leave it out")
    refuse_inputs_inside(args.out, [args.docs, args.vectors])  # replaced with the old index
    refuse_output_in_index(args.out, "--out")  # another index's re-index would refuse it
    store_given = _store_of(args)
    check_target(args.out, index_target(store_given), "a ragkit index",  # refuse before the
                 folder=True,  # work; a Milvus build interrupted there is resumed (in place)
                 replaced=(store_given or "memory").partition(":")[0] == "memory")
    if args.update and is_index(args.out):
        return _update(args)
    store = parse_store(args.store, args.milvus_index)
    config = index_config(args)
    vectors = _precomputed(args.vectors, config) if args.vectors else None
    if _bulk(args, config, vectors, store):
        return
    data = load_dataset(args.docs, skip_bad=args.skip_bad, queries=False)
    pipeline = Pipeline.build(data.documents, config, chunks=data.chunks, vectors=vectors,
                              vectors_path=args.vectors or "vectors")
    pipeline.save(args.out, store)
    print_usage(args)
    print(f"indexed {counted(len(data.documents), 'document')} as "
          f"{counted(len(pipeline.chunks), 'chunk')} into {args.out}")
    print_skipped(data.documents)


def _store_of(args: argparse.Namespace) -> str | None:
    """--store, or with --update of an index its own store's kind: a Milvus index is updated
    in place, so a file of the user's beside it stays, as a Milvus build keeps it (--update
    refused it as if the folder were replaced whole)."""
    if args.store or not args.update:
        return args.store
    store = (manifest_of(Path(args.out)) or {}).get("store")  # None: no index there
    return str(store["kind"]) if isinstance(store, dict) and "kind" in store else None


def print_skipped(documents) -> None:
    """After the summary line (stderr): the files of types ragkit does not read, by suffix,
    the symbolic links to folders (not followed), those to nothing or in a loop, and
    (--skip-bad) the files left out, each with why."""
    unread, linked = getattr(documents, "unread", []), getattr(documents, "linked", [])
    broken = getattr(documents, "broken", [])
    if unread or linked or broken:
        # deferred: the loaders
        from ragkit.document_folder import broken_note, linked_note, unread_note
        for note in (unread_note(unread), linked_note(linked), broken_note(broken)):
            if note:
                print(note, file=sys.stderr)
    skipped = getattr(documents, "skipped", [])
    if skipped:
        print(f"skipped {len(skipped)} bad file{'s' if len(skipped) > 1 else ''}:",
              file=sys.stderr)
        for entry in skipped:
            print(f"  {entry.reason}", file=sys.stderr)


def _bulk(args: argparse.Namespace, config, vectors, store) -> bool:
    """A documents JSONL file indexed without embeddings: built block by block on worker
    processes (`ragkit.bulk_index`); False when that build does not apply or a bad line
    needs the one-process build, whose error names it."""
    from ragkit import bulk_index, index_cache  # deferred: numpy, scipy
    if index_cache.folder() is not None or not bulk_index.applies(config, Path(args.docs),
                                                                    vectors, store):
        return False
    try:
        docs, chunks = bulk_index.index_jsonl(Path(args.docs), config, args.out)
    except bulk_index.Sequential:
        return False
    print(f"indexed {counted(docs, 'document')} as {counted(chunks, 'chunk')} into {args.out}")
    return True


def _update(args: argparse.Namespace) -> None:
    """--update: re-index added and changed documents, drop removed ones (`update_index`)."""
    # deferred: numpy, pandas and scipy load only when a command builds or reads an index
    from ragkit.datasets import load_dataset
    from ragkit.stores import StoreSpec
    from ragkit.update import update_index
    if args.vectors:
        raise RagkitError("--update re-embeds the changed documents itself; rebuild the "
                          "index to use --vectors")
    old = load_index(args.out)
    check_same_options(args, old.config, args.out, "--update keeps the index's own options")
    if old.config.parent_child:  # before the folder is loaded and chunked (it was after)
        raise RagkitError(f"{args.out}: --update cannot change a --parents index; rebuild it")
    if old.config.contextualizer == "claude":  # paid calls for the changed documents: their
        claude_contexts(old.config.context_model or DEFAULT_MODEL)  # cost is said after
    record = old.store.record()
    if args.store and args.store.partition(":")[0] != record["kind"]:
        raise RagkitError(f"{args.out}: --update keeps the index's store ({record['kind']}); "
                          f"write --store {args.store} to another folder")
    data = load_dataset(args.docs, skip_bad=args.skip_bad, queries=False)
    indexed = {c.doc_id for c in old.chunks}
    kept = kept_in_index(sorted(indexed), data.documents)  # unreadable now: kept as indexed
    had, gone = len(indexed), len(indexed - {d.id for d in data.documents} - set(kept))
    if 2 * gone > had and not args.allow_removals:  # before any work
        raise RagkitError(f"{args.out}: --update would remove {gone} of the index's "
                          f"{counted(had, 'document')} ({args.docs} holds "
                          f"{len(data.documents)}); check the "
                          f"path, or add --allow-removals")
    new, changed, removed = update_index(old, data.documents, data.chunks, progress=True)
    if new is not None:
        new.save(args.out, StoreSpec("milvus", record.get("uri"), record.get("dense_index",
                                                                             "FLAT"))
                 if record["kind"] == "milvus" else None)
    print(f"updated {args.out}: {counted(len(changed), 'document')} added or changed, "
          f"{len(removed)} removed, {len(data.documents) - len(changed)} unchanged"
          + (f", {len(kept)} kept as indexed" if kept else "")
          + (f"; {counted(len(new.chunks), 'chunk')}" if new is not None else ""))
    print_skipped(data.documents)
    print_usage(old.config)


def _precomputed(path: Path, config):
    """The --vectors array, its width checked against the query embedder before any work."""
    # deferred: numpy and the embedders' runtimes load only with --vectors
    from ragkit.embed import get_embedder
    from ragkit.vectors import check_width, read_vectors
    if not config.embedder:
        raise RagkitError("--vectors needs --embedder NAME, the model that embeds the queries "
                          "(the one that made the vectors), not none")
    vectors = read_vectors(path)
    check_width(vectors, get_embedder(config.embedder), path)
    return vectors


def cmd_search(args: argparse.Namespace) -> None:
    # deferred: numpy, pandas and scipy load only when a command builds or reads an index
    from ragkit.pipeline import SearchConfig
    from ragkit.runs import is_trec_run, trec_lines, write_trec
    to_stdout = str(args.out) == "-"  # it wrote a file named "-"
    if to_stdout:
        check_stdout("--out")
    else:
        refuse_output_in_index(args.out, "--out")
        check_target(args.out, is_trec_run, "a TREC run", folder=False)
    pipeline = load_index(args.index)
    queries = load_queries_jsonl(args.queries)
    if not queries:  # it wrote an empty run and said "wrote 0 queries"
        raise RagkitError(f"{args.queries}: no queries (one JSON object per line, with 'id' "
                          f"and 'text')")
    if args.mode is None:  # it refused "use mode 'bm25'" where eval and ask used BM25
        args.mode = "hybrid" if pipeline.has_dense else "bm25"
    config = SearchConfig(mode=args.mode, **fusion_settings(args, [args.mode]),
                          rerank=chosen_rerank(args.rerank, args.mode, pipeline),
                          rerank_candidates=args.rerank_candidates)
    shape = None
    if args.level == "doc":  # enough chunks to fill k documents, each at its best chunk
        from ragkit.eval_runs import doc_depth, doc_level, docs_of  # deferred: pandas
        docs, doc_of = docs_of(pipeline.chunks)
        args.k = clamp_k(args.k, len(set(docs)), "document")
        depth, k = doc_depth(docs, args.k), args.k
        shape = lambda ranking: doc_level(ranking, doc_of)[:k]  # noqa: E731
    else:
        args.k = depth = clamp_k(args.k, len(pipeline.chunks))
    tally = {"lines": 0, "short": 0, "empty": 0}  # what the run holds, counted as written
    rankings = _rankings(pipeline, queries, (depth, args.k), config, shape, tally)
    if to_stdout:  # the run alone on stdout, so `> run.txt` or a pipe gets a clean run
        sys.stdout.writelines(trec_lines(rankings, tag=args.tag or args.mode))
        sys.stdout.flush()
    else:
        write_trec(args.out, rankings, tag=args.tag or args.mode)
    with redirect_stdout(sys.stderr if to_stdout else sys.stdout):
        print_rerank_summary(pipeline)
        print(_wrote(len(queries), args.k, "document" if args.level == "doc" else "chunk",
                     tally, "standard output" if to_stdout else args.out))


def _wrote(n_queries: int, k: int, unit: str, tally: dict[str, int], out: Path | str) -> str:
    """The line that says what the run holds: "N queries × top k" only when every query
    filled its k, else the lines written (BM25 matches only the chunks holding a query word,
    so "1 query × top 8 chunks" over 2 lines over-reported)."""
    queries = counted(n_queries, "query", "queries")
    notes = [f"{tally['short']} with fewer matches"] if tally["short"] else []
    if tally["empty"]:
        notes.append(f"{tally['empty']} with no hit: no line in the run")
    if not notes:
        return f"wrote {queries} × top {counted(k, unit)} to {out}"
    return (f"wrote {counted(tally['lines'], unit)} for {queries} to {out} (top {k} asked; "
            + "; ".join(notes) + ")")


def _rankings(pipeline, queries: list, depth_k: tuple[int, int], config,
              shape: Callable[[list], list] | None, tally: dict[str, int]
              ) -> Iterator[tuple[str, list]]:
    """(query id, ranking) for every query, searched `batch_size` queries at a time,
    so a run of many queries or a huge --k never holds every ranking at once; `shape` turns a
    chunk ranking into what the run lists (its documents' top k). `depth_k` is the depth
    searched and the k listed; `tally` counts the lines yielded, the rankings shorter than k
    ("short") and the empty ones."""
    depth, k = depth_k
    step = batch_size(held_per_query(depth, config))
    for start in range(0, len(queries), step):
        part = queries[start:start + step]
        found = pipeline.search([q.text for q in part], depth, config)
        if shape is not None:
            found = [shape(r) for r in found]
        tally["lines"] += sum(len(r) for r in found)
        tally["empty"] += sum(not r for r in found)
        tally["short"] += sum(0 < len(r) < k for r in found)
        yield from zip([q.id for q in part], found)


def held_per_query(depth: int, config) -> int:
    """Results one query holds while searched: its top `depth`, or a hybrid's or a reranker's
    candidates when deeper (150 each by default: at the default --k 20, sizing by k alone
    let a batch hold 7.5 times SEARCH_HITS); a hybrid's lists reach `config.fetch_depth`."""
    return max(depth, fetch_depth(depth, config.candidates) if config.mode == "hybrid" else 0,
               config.rerank_candidates if config.rerank != "none" else 0)


def batch_size(depth: int) -> int:
    """Queries searched together for `depth` results each: about SEARCH_HITS results in all
    (at least one query), whole blocks of the dense scan's 256 when more than one block."""
    size = max(1, SEARCH_HITS // depth)
    return size - size % 256 if size > 256 else size


def add_parsers(sub) -> None:
    """Add this module's subcommands to the `ragkit` parser."""
    p = sub.add_parser("index", help="chunk, contextualize and index documents",
                       formatter_class=Help)
    p.add_argument("docs", type=nonempty_path,
                   help="documents JSONL, a folder (Markdown, text, code, PDF, HTML, Word "
                        "files), one PDF, HTML or Word file, or a data set")
    p.add_argument("--out", type=written_path, required=True, help="index folder to write")
    p.add_argument("--store", default=None,
                   help="where the rows live: memory (arrays in --out; the default) | milvus "
                        "(Milvus Lite file in --out, or $MILVUS_URI) | milvus:http://HOST:19530 "
                        "(token from $MILVUS_TOKEN)")
    p.add_argument("--update", action="store_true",
                   help="if --out is an index: re-index only the documents added or changed "
                        "since, drop the removed ones, keep its store and index options (an "
                        "index option given that differs from the index's is refused); else "
                        "build it")
    p.add_argument("--allow-removals", action="store_true",
                   help="let --update remove more than half of the index's documents (a "
                        "mistyped path, one file or a sub-folder, would empty the index)")
    p.add_argument("--skip-bad", action="store_true",
                   help="leave out a folder's files that cannot be read (a scanned, encrypted "
                        "or damaged PDF, a page with no body text, ...) with a warning each, "
                        "and list them at the end; without it the first such file stops the "
                        "build (exit 2)")
    p.add_argument("--milvus-index", default="FLAT", choices=("FLAT", "HNSW", "IVF_FLAT"),
                   help="Milvus dense index: FLAT is exact; HNSW / IVF_FLAT approximate")
    add_index_options(p)
    add_batch_options(p)
    p.add_argument("--vectors", type=nonempty_path, metavar="FILE.npy",
                   help="precomputed dense vectors: a 2-d float .npy, one row per chunk in "
                        "chunk order (as in chunks.jsonl); --embedder names the model that "
                        "made them, which embeds the queries")
    p.set_defaults(func=cmd_index)

    p = sub.add_parser("search", help="search an index, write a TREC run", formatter_class=Help)
    p.add_argument("index", type=nonempty_path, help="index folder written by `ragkit index`")
    p.add_argument("--queries", type=nonempty_path, required=True, help='JSONL {"id", "text"}')
    p.add_argument("--out", type=nonempty_path, required=True,
                   help="TREC run file to write; '-' writes the run to standard output (and "
                        "what it holds to standard error)")
    p.add_argument("--tag", default="", help="run tag (default: the mode)")
    p.add_argument("--level", default="chunk", choices=("chunk", "doc"),
                   help="rank chunks, or documents (each once, scored by its best chunk) "
                        "for document-level qrels")
    add_search_options(p)
    p.set_defaults(func=cmd_search)
