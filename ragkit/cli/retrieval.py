"""`ragkit index`, `search`, `eval` and `tune`: build an index, search it, score runs, tune fusion."""
from __future__ import annotations

import argparse
from pathlib import Path

from ragkit.documents import RagkitError
from ragkit.cli.options import (DEFAULT_RERANK, Help, add_index_options, add_search_options,
                                check_index_covers, index_config, positive_int, print_rerank_summary,
                                print_usage)


def cmd_index(args: argparse.Namespace) -> None:
    from ragkit.atomic import check_target
    from ragkit.datasets import load_dataset
    from ragkit.pipeline import Pipeline, is_index
    from ragkit.stores import parse_store
    check_target(args.out, is_index, "a ragkit index", folder=True)  # refuse before the work
    if args.update and is_index(args.out):
        return _update(args)
    store = parse_store(args.store, args.milvus_index)
    config = index_config(args)
    vectors = _precomputed(args.vectors, config) if args.vectors else None
    if _bulk(args, config, vectors, store):
        return
    data = load_dataset(args.docs)
    pipeline = Pipeline.build(data.documents, config, chunks=data.chunks, vectors=vectors,
                              vectors_path=args.vectors or "vectors")
    pipeline.save(args.out, store)
    print_usage(args)
    print(f"indexed {len(data.documents)} documents as {len(pipeline.chunks)} chunks "
          f"into {args.out}")


def _bulk(args: argparse.Namespace, config, vectors, store) -> bool:
    """A documents JSONL file indexed without embeddings: built block by block on worker
    processes (`ragkit.bulk_index`); False when that build does not apply or a bad line
    needs the one-process build, whose error names it."""
    from ragkit import bulk_index, index_cache
    if index_cache.folder() is not None or not bulk_index.applies(config, Path(args.docs),
                                                                    vectors, store):
        return False
    try:
        docs, chunks = bulk_index.index_jsonl(Path(args.docs), config, args.out)
    except bulk_index.Sequential:
        return False
    print(f"indexed {docs} documents as {chunks} chunks into {args.out}")
    return True


def _update(args: argparse.Namespace) -> None:
    """--update: re-index the added and changed documents, drop the removed ones, in the
    index's own store and config (`ragkit.update.update_index`)."""
    from ragkit.datasets import load_dataset
    from ragkit.pipeline import Pipeline
    from ragkit.stores import StoreSpec
    from ragkit.update import update_index
    if args.vectors:
        raise RagkitError("--update re-embeds the changed documents itself; rebuild the "
                          "index to use --vectors")
    old = Pipeline.load(args.out)
    record = old.store.record()
    if args.store and args.store.partition(":")[0] != record["kind"]:
        raise RagkitError(f"{args.out}: --update keeps the index's store ({record['kind']}); "
                          f"write --store {args.store} to another folder")
    data = load_dataset(args.docs)
    new, changed, removed = update_index(old, data.documents, data.chunks, progress=True)
    if new is not None:
        new.save(args.out, StoreSpec("milvus", record.get("uri"), record.get("dense_index",
                                                                             "FLAT"))
                 if record["kind"] == "milvus" else None)
    print(f"updated {args.out}: {len(changed)} documents added or changed, {len(removed)} "
          f"removed, {len(data.documents) - len(changed)} unchanged"
          + (f"; {len(new.chunks)} chunks" if new is not None else ""))


def _precomputed(path: Path, config):
    """The --vectors array, its width checked against the query embedder before any work."""
    from ragkit.embed import get_embedder
    from ragkit.vectors import check_width, read_vectors
    if not config.embedder:
        raise RagkitError("--vectors needs --embedder NAME, the model that embeds the queries "
                          "(the one that made the vectors), not none")
    vectors = read_vectors(path)
    check_width(vectors, get_embedder(config.embedder), path)
    return vectors


def cmd_search(args: argparse.Namespace) -> None:
    from ragkit.atomic import check_target
    from ragkit.documents import load_queries_jsonl
    from ragkit.eval_runs import doc_depth, doc_level
    from ragkit.pipeline import Pipeline, SearchConfig
    from ragkit.runs import is_trec_run, write_trec
    check_target(args.out, is_trec_run, "a TREC run", folder=False)
    pipeline = Pipeline.load(args.index)
    queries = load_queries_jsonl(args.queries)
    rerank = args.rerank or (DEFAULT_RERANK if args.mode == "hybrid" else "none")
    config = SearchConfig(mode=args.mode, fusion=args.fusion, rerank=rerank,
                          rerank_candidates=args.rerank_candidates)
    texts = [q.text for q in queries]
    if args.level == "doc":  # enough chunks to fill k documents, each at its best chunk
        doc_of = {c.id: c.doc_id for c in pipeline.chunks}
        depth = doc_depth(list(doc_of.values()), args.k)
        rankings = [doc_level(r, doc_of)[:args.k] for r in pipeline.search(texts, depth, config)]
    else:
        rankings = pipeline.search(texts, args.k, config)
    write_trec(args.out, {q.id: r for q, r in zip(queries, rankings)}, tag=args.tag or args.mode)
    print_rerank_summary(pipeline)
    unit = "documents" if args.level == "doc" else "chunks"
    print(f"wrote {len(queries)} queries × top {args.k} {unit} to {args.out}")


def cmd_eval(args: argparse.Namespace) -> None:
    from ragkit.atomic import check_target
    from ragkit.eval_runs import is_per_query_csv
    if (args.run is None) != (args.qrels is None):
        raise RagkitError("--run and --qrels go together: ragkit eval --run RUN --qrels QRELS")
    if (args.dataset is None) == (args.run is None):
        raise RagkitError("give a DATASET folder, or --run RUN --qrels QRELS (not both)")
    if args.per_query:
        check_target(args.per_query, is_per_query_csv, "a per-query CSV", folder=False)
    if args.run:
        _eval_run_file(args)
    else:
        _eval_dataset(args)


def _eval_run_file(args: argparse.Namespace) -> None:
    """Score a TREC run against qrels: every relevant id is one golden item."""
    from ragkit.datasets import read_qrels, relevant
    from ragkit.eval_runs import check_run, qrels_judgments, score_run
    from ragkit.runs import read_trec
    if not args.run.is_file():
        raise RagkitError(f"{args.run}: no such file")
    run = {qid: [ident for ident, _ in r] for qid, r in read_trec(args.run).items()}
    qrels = read_qrels(args.qrels)
    judgments = qrels_judgments(relevant(qrels))
    ignored, missing = check_run(run, qrels, judgments, str(args.run), str(args.qrels))
    name = args.run.stem
    tables = {name: score_run(run, judgments, args.k)}
    print(f"{args.run}: {len(judgments)} judged queries ({len(missing)} without results, "
          f"scored 0), {len(ignored)} run queries without judgments ignored")
    _print_and_save(args, {name: run}, tables, judgments)


def _eval_dataset(args: argparse.Namespace) -> None:
    """Build (or load) an index of a data set, run each mode on its judged queries, score."""
    from ragkit.datasets import load_dataset
    from ragkit.eval_runs import score_run
    from ragkit.evaluate import judge
    from ragkit.pipeline import Pipeline, SearchConfig
    data = load_dataset(args.dataset, args.split).split(args.split)
    if not data.queries:
        raise RagkitError(f"{args.dataset}: no queries to evaluate")
    if args.index:
        pipeline = Pipeline.load(args.index)
        check_index_covers(pipeline, data, args)
    else:
        pipeline = Pipeline.build(data.documents, index_config(args), chunks=data.chunks)
    judgments = judge(data.queries, data.documents, pipeline.chunks)
    judged = [q for q in data.queries if q.id in judgments]
    modes = args.mode or (["bm25", "dense", "hybrid"] if pipeline.has_dense
                          else ["bm25"])
    rerank = args.rerank or "none"
    runs = {(m if rerank == "none" else f"{m}+{rerank}"):
            pipeline.run(judged, args.k, SearchConfig(mode=m, fusion=args.fusion, rerank=rerank,
                                                      rerank_candidates=args.rerank_candidates))
            for m in modes}
    tables = {m: score_run(run, judgments, args.k) for m, run in runs.items()}
    print(f"{data.name}: {len(judgments)} judged queries, {len(pipeline.chunks)} chunks")
    _print_and_save(args, runs, tables, judgments, data.queries)
    print_rerank_summary(pipeline)


def _print_and_save(args: argparse.Namespace, runs: dict, tables: dict, judgments,
                    queries: list = ()) -> None:
    """Print the summary table (by query kind too if asked); write the per-query CSV if asked."""
    from ragkit.atomic import write_text
    from ragkit.eval_runs import cutoffs, is_per_query_csv, per_query_rows
    from ragkit.evaluate import by_kind, summary_table
    print(summary_table(tables).round(3).to_string())
    if args.by_kind and queries:
        ks = cutoffs(args.k)[0]
        for metric in dict.fromkeys((f"Pass@{ks[0]}", f"Pass@{ks[-1]}")):
            print(f"\n{metric} by query kind")
            print(by_kind(tables, queries, metric).round(1).to_string())
    if args.per_query:
        kinds = {q.id: q.kind for q in queries}
        rows = per_query_rows(runs, tables, judgments, kinds, args.k)
        write_text(args.per_query, rows.to_csv(index=False), is_ours=is_per_query_csv,
                   what="a per-query CSV")
        print(f"per-query metrics: {args.per_query}")


def cmd_tune(args: argparse.Namespace) -> None:
    """Sweep the dense weight α and RRF's k on a data set's labelled queries; print the best."""
    from ragkit.datasets import load_dataset
    from ragkit.evaluate import judge, round_metrics
    from ragkit.pipeline import Pipeline, SearchConfig
    from ragkit.tune import (best_alpha, best_rrf_k, candidate_lists, check_metric, parse_grid,
                             sweep_alpha, sweep_rrf_k, sweep_table)
    check_metric(args.metric, args.k)  # bad options are refused before any work
    alphas, rrf_ks = parse_grid(args.alphas), parse_grid(args.rrf_ks, integer=True)
    data = load_dataset(args.dataset, args.split)
    split = args.split or ("dev" if any(q.split == "dev" for q in data.queries) else None)
    data = data.split(split)
    pipeline = Pipeline.load(args.index) if args.index else None
    config = None if pipeline else index_config(args)
    if not (pipeline.has_dense if pipeline else config.embedder):  # refuse before building
        raise RagkitError("tune weighs BM25 against dense retrieval: build the index with an "
                          "embedder (not --embedder none)")
    if pipeline is not None:
        check_index_covers(pipeline, data, args)
    else:
        pipeline = Pipeline.build(data.documents, config, chunks=data.chunks)
    judgments = judge(data.queries, data.documents, pipeline.chunks)
    judged = [q for q in data.queries if q.id in judgments]
    if not judged:
        raise RagkitError(f"{args.dataset}: no query with golden items to tune on")
    lists = candidate_lists(pipeline, judged, max(args.k, SearchConfig().candidates))
    print(f"{data.name}: {len(judged)} judged queries of split {split or '(all)'}, "
          f"{len(pipeline.chunks)} chunks")
    for name, tables, best in (("dense weight α", sweep_alpha(lists, judgments, alphas, args.k),
                                best_alpha),
                               ("RRF k", sweep_rrf_k(lists, judgments, rrf_ks, args.k),
                                best_rrf_k)):
        choice = best(tables, args.metric)
        print(f"\n{name}")
        print(round_metrics(sweep_table(tables, choice)).to_string())
        print(f"{name}: {choice}")


EVAL_HELP = """Score retrieval, either of each mode on a data set (its index built here, or
--index DIR), or of any TREC run against TREC or BEIR qrels (--run RUN --qrels QRELS).
Pass@k and R@k are shown at 5, 10, 20 up to --k and at --k itself, nDCG at 10 (at --k
when smaller); MRR is over the top --k results."""


def add_parsers(sub) -> None:
    """Add this module's subcommands to the `ragkit` parser."""
    p = sub.add_parser("index", help="chunk, contextualize and index documents",
                       formatter_class=Help)
    p.add_argument("docs", type=Path, help="documents JSONL, a folder, or a data set")
    p.add_argument("--out", type=Path, required=True, help="index folder to write")
    p.add_argument("--store", default=None,
                   help="where the rows live: memory (arrays in --out; the default) | milvus "
                        "(Milvus Lite file in --out, or $MILVUS_URI) | milvus:http://HOST:19530 "
                        "(token from $MILVUS_TOKEN)")
    p.add_argument("--update", action="store_true",
                   help="if --out is an index: re-index only the documents added or changed "
                        "since, drop the removed ones, keep its store and index options "
                        "(the other index options are then ignored); else build it")
    p.add_argument("--milvus-index", default="FLAT", choices=("FLAT", "HNSW", "IVF_FLAT"),
                   help="Milvus dense index: FLAT is exact; HNSW / IVF_FLAT approximate")
    add_index_options(p)
    p.add_argument("--vectors", type=Path, metavar="FILE.npy",
                   help="precomputed dense vectors: a 2-d float .npy, one row per chunk in "
                        "chunk order (as in chunks.jsonl); --embedder names the model that "
                        "made them, which embeds the queries")
    p.set_defaults(func=cmd_index)

    p = sub.add_parser("search", help="search an index, write a TREC run", formatter_class=Help)
    p.add_argument("index", type=Path, help="index folder written by `ragkit index`")
    p.add_argument("--queries", type=Path, required=True, help='JSONL {"id", "text"}')
    p.add_argument("--out", type=Path, required=True, help="TREC run file to write")
    p.add_argument("--tag", default="", help="run tag (default: the mode)")
    p.add_argument("--level", default="chunk", choices=("chunk", "doc"),
                   help="rank chunks, or documents (each once, scored by its best chunk) "
                        "for document-level qrels")
    add_search_options(p)
    p.set_defaults(func=cmd_search)

    p = sub.add_parser("eval", help="Pass@k, recall, MRR, nDCG of each mode or of a run",
                       description=EVAL_HELP, formatter_class=Help)
    p.add_argument("dataset", type=Path, nargs="?",
                   help="shipped data, cookbook or BEIR folder (or use --run and --qrels)")
    p.add_argument("--split", default=None,
                   help="queries of this split (default: all); a BEIR folder reads "
                        "qrels/SPLIT.tsv (default: test)")
    p.add_argument("--index", type=Path, help="use a saved index instead of building one")
    p.add_argument("--run", type=Path, help="score this TREC run instead of a data set")
    p.add_argument("--qrels", type=Path,
                   help="judgments for --run: TREC qrels (qid iter docid rel) or BEIR TSV "
                        "(query-id, corpus-id, score); grades > 0 are relevant")
    p.add_argument("--per-query", type=Path, metavar="FILE.csv",
                   help="also write one row per query and method: query, method, kind, "
                        "first_relevant_rank, then each metric")
    p.add_argument("--by-kind", action="store_true", help="also break Pass@k down by query kind")
    add_index_options(p)
    add_search_options(p, multiple=True)
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser("tune", help="sweep fusion weights and RRF k on labelled queries",
                       formatter_class=Help)
    p.add_argument("dataset", type=Path, help="shipped-layout, cookbook or BEIR folder")
    p.add_argument("--split", default=None,
                   help="queries of this split (default: dev when there is one, else all)")
    p.add_argument("--metric", default="Pass@5", help="pick the best point by this mean")
    p.add_argument("--alphas", default="0:1:0.1",
                   help="dense weights α (BM25 gets 1 − α): START:STOP:STEP or V1,V2,...")
    p.add_argument("--rrf-ks", default="1,5,10,20,40,60,100,200", help="RRF k values")
    p.add_argument("--k", type=positive_int, default=20, help="results per query")
    p.add_argument("--index", type=Path, help="use a saved index instead of building one")
    add_index_options(p)
    p.set_defaults(func=cmd_tune)
