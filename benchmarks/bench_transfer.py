"""Which first stage and which second view, measured on four sets side by side.

Run: python benchmarks/bench_transfer.py [--cookbook DIR] [--heldout DIR] [--window N]
                                         [--save F | --load F] [--no-use] [--code]
                                         [--code-dev] [--only "A;B"]

The options the offline default was chosen among (README, "Embedders"): first stage e5-small
(weighted or RRF), `auto` (MiniLM, USE for Hangul) or both dense lists fused with BM25, each
with or without the learned reranker and with USE, MiniLM or e5-small as the reranker's second
view. For each data set it builds the `auto` and the e5-small index (structural context,
96-token MaxP windows), takes each first stage's top 150 per question and computes every
feature (`ragkit.rerank.features`: dense MaxP under each model, BM25, doc_max, phrase).
`--window N` builds the e5-small index with N-token MaxP windows instead (the `auto` index
keeps 96): how the window was checked for e5-small (README, "Results on Anthropic's cookbook
data set").

Dev = the shipped dev split + the dev half of the held-out scikit-learn docstrings
(`data/heldout/`, extracted when absent, as `ragkit.train_reranker` fits). Each reranker is
fitted on all of dev and scored out-of-fold on dev by leave-one-question-kind-out; the
shipped test split, Anthropic's cookbook set, the scikit-learn test half and the whole held-out
code set (httpx and tqdm source) are only reported.
Then, per set, the paired sign-flip test and bootstrap interval of each option's Pass@5
against "auto|use" refitted on the same dev (the old default, `ragkit.stats.paired_test`),
and the per-kind Pass@5 of the shipped test split; last, the chosen reranker's weights and the
Pass@5 of each feature ranking alone (why the reranker costs Pass@5 on code). Two options only
probe that: the fused first-stage score as a sixth feature ("e5|minilm,first") and one
feature for both model families, the mean of their scaled MaxP ("e5|ens").
`--code` adds the code-ness interaction options (`CODE_OPTIONS`): each family's MaxP times a
candidate's code signal read from its content (`code_signal.py`: the share of its lines that
look like code, or its file's language suffix) or times "the question names an identifier",
so the reranker can weigh e5-small and MiniLM apart on code and on prose; it also prints each
family's Pass@5 alone on code candidates. `--code-dev` fits on the code set's dev half too
(every option on that same dev) and reports the code set's test half only. `--no-use` collects
without USE (a third faster; the options reading it are left out); `--only` keeps the named
options besides the two every comparison is made against. A pickle saved before 5 December
2026 lacks the chunks' texts `--code` reads: collect again.
Nothing here is used by ragkit at run time.
"""
from __future__ import annotations

import argparse
import pickle
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from code_signal import CODE_OPTIONS, annotate

from ragkit import IndexConfig, Pipeline, load_cookbook, load_shipped
from ragkit.embed import get_embedder
from ragkit.evaluate import judge, pass_at_k, reciprocal_rank
from ragkit.fusion import fuse
from ragkit.rerank.features import doc_max, normalize, phrase_share, word_pairs
from ragkit.rerank.second_view import SecondView
from ragkit.stats import paired_test
from ragkit.train_reranker import fit, heldout_root

ROOT = Path(__file__).resolve().parent.parent
COOKBOOK = ROOT.parent / "shared" / "data" / "cookbook"
HELDOUT = ROOT / "build" / "heldout"  # sklearn/ and pycode/ (ragkit.train_reranker extracts them)
HELD = ("sklearn", "pycode")
FITTED_ON = ("sklearn",)  # as ragkit.train_reranker: the code set is only reported, all of it
BASE = ["bm25", "docmax", "phrase"]
OPTIONS = {  # name: (first stage, reranker features or None)
    "auto": ("auto", None), "e5": ("e5", None), "both": ("both", None),
    "auto|use": ("auto", ["minilm", *BASE, "use"]),
    "auto|e5": ("auto", ["minilm", *BASE, "e5"]),
    "e5|use": ("e5", ["e5", *BASE, "use"]),
    "e5|minilm": ("e5", ["e5", *BASE, "minilm"]),
    "e5|use,minilm": ("e5", ["e5", *BASE, "use", "minilm"]),
    "both|use": ("both", ["minilm", "e5", *BASE, "use"]),
    "e5 rrf": ("e5 rrf", None),
    "e5 rrf|minilm": ("e5 rrf", ["e5", *BASE, "minilm"]),
    # why the reranker costs Pass@5 on code: can it be kept nearer the first stage?
    "e5|minilm,first": ("e5", ["e5", *BASE, "minilm", "first"]),  # + the fused score
    "e5|ens": ("e5", ["ens", *BASE]),  # both families averaged: one weight, not two
}


def stages(lists: dict, i: int) -> dict[str, list]:
    """The first stages of question i: weighted 0.6 dense / 0.4 BM25 (0.3 + 0.3 for both
    dense lists), and e5-small with BM25 by RRF, k = 5 (the best k on dev)."""
    a, e = lists["auto"][i], lists["e5-small"][i]
    w = {"dense": .6, "bm25": .4}
    return {"auto": fuse(a, "weighted", w, top=150),
            "e5": fuse({"dense": e["dense"], "bm25": a["bm25"]}, "weighted", w, top=150),
            "both": fuse({"d1": a["dense"], "d2": e["dense"], "bm25": a["bm25"]}, "weighted",
                         {"d1": .3, "d2": .3, "bm25": .4}, top=150),
            "e5 rrf": fuse({"dense": e["dense"], "bm25": a["bm25"]}, "rrf", rrf_k=5, top=150)}


def collect(name: str, data, window: int = 96, use: bool = True) -> dict:
    """Per question: kind, split, text, judged items, and per first stage (ids, raw features,
    candidate positions); per chunk its document's path, id and title and its text.
    `window` is the e5-small index's MaxP window; `use` False leaves USE out (zeros: the
    options reading it are then skipped), a third of the time."""
    start = time.perf_counter()
    configs = {"auto": IndexConfig(embedder="auto"),
               "e5-small": IndexConfig(embedder="e5-small", window=window)}
    built = {e: Pipeline.build(data.documents, config, chunks=data.chunks, progress=True)
             for e, config in configs.items()}
    chunks = built["auto"].chunks
    position = {c.id: n for n, c in enumerate(chunks)}
    judgments = judge(data.queries, data.documents, chunks)
    texts = [q.text for q in data.queries]
    lists = {e: p.retriever_lists(texts, 100) for e, p in built.items()}
    vectors = {e: p.embedder.embed(texts, input_type="query") for e, p in built.items()}
    use = SecondView(built["auto"], get_embedder("use-multilingual")) if use else None
    out = []
    for i, query in enumerate(data.queries):
        row = {"id": query.id, "kind": query.kind, "split": query.split, "text": query.text,
               "items": judgments.get(query.id), "stages": {}}
        for stage, first in stages(lists, i).items():
            at = np.array([position[c] for c, _ in first], dtype=np.int64)
            pairs = word_pairs(query.text)
            row["stages"][stage] = ([c for c, _ in first], {
                "first": np.array([s for _, s in first]),
                "minilm": built["auto"].dense.maxp_at(vectors["auto"][i], at),
                "e5": built["e5-small"].dense.maxp_at(vectors["e5-small"][i], at),
                "use": use.scores(query.text, at) if use else np.zeros(len(at)),
                "bm25": built["auto"].store.bm25_scores(query.text, at),
                "phrase": np.array([phrase_share(pairs, chunks[j].indexed_text) for j in at]),
                "doc": [chunks[j].doc_id for j in at], "at": at})
        out.append(row)
    print(f"{name}: {len(chunks)} chunks, collected in {time.perf_counter() - start:.0f} s",
          file=sys.stderr)
    documents = {d.id: d for d in data.documents}
    return {"questions": out, "chunks": [
        (str(documents[c.doc_id].metadata.get("path") or ""), c.doc_id,
         documents[c.doc_id].title, c.text) for c in chunks]}


def column(feats: dict, name: str) -> np.ndarray:
    """One feature of a question's candidates, min-max scaled within the question (phrase is
    a share already); `ens` = the mean of the scaled e5-small and MiniLM MaxP; `a*b` the
    product of two columns; `code`, `suffix`, `qid` and `prose` (1 − code) as `annotate` set
    them."""
    if "*" in name:
        a, b = name.split("*")
        return column(feats, a) * column(feats, b)
    if name in ("code", "suffix", "qid"):  # already in [0, 1] (`annotate`)
        return feats[name]
    if name == "prose":
        return 1 - feats["code"]
    if name == "docmax":
        return normalize(doc_max(feats["doc"], feats["first"]))
    if name == "ens":
        return (normalize(feats["e5"]) + normalize(feats["minilm"])) / 2
    return feats[name] if name == "phrase" else normalize(feats[name])


def matrix(feats: dict, columns: list[str]) -> np.ndarray:
    return np.column_stack([column(feats, c) for c in columns])


def groups(rows: list, stage: str, columns: list[str]) -> list:
    out = []
    for r in rows:
        if r["items"]:
            ids, feats = r["stages"][stage]
            relevant = frozenset().union(*r["items"])
            out.append((matrix(feats, columns), np.array([i in relevant for i in ids], int)))
    return out


def scores(rows: list, stage: str, columns=None, model=None) -> pd.DataFrame:
    """Pass@5, Pass@20 (%) and RR per judged question, reranked by `model` when given."""
    out = {}
    for r in rows:
        if not r["items"]:
            continue
        ids, feats = r["stages"][stage]
        if model is not None:
            s = model.score(matrix(feats, columns))
            ids = [ids[i] for i in sorted(range(len(ids)), key=lambda i: -s[i])]
        out[r["id"]] = {"Pass@5": 100 * pass_at_k(ids, r["items"], 5),
                        "Pass@20": 100 * pass_at_k(ids, r["items"], 20),
                        "MRR": reciprocal_rank(ids, frozenset().union(*r["items"])),
                        "kind": r["kind"]}
    return pd.DataFrame(out).T


def kind_out(dev: list, stage: str, columns: list[str]) -> pd.DataFrame:
    kinds = sorted({r["kind"] for r in dev if r["items"]})
    parts = [scores([r for r in dev if r["kind"] == k], stage, columns,
                    fit(groups([r for r in dev if r["kind"] != k], stage, columns)))
             for k in kinds]
    return pd.concat(parts)


def mean(table: pd.DataFrame) -> str:
    m = table[["Pass@5", "Pass@20", "MRR"]].astype(float).mean()
    return f"{m['Pass@5']:.1f} / {m['Pass@20']:.1f} / {m['MRR']:.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cookbook", type=Path, default=COOKBOOK)
    parser.add_argument("--heldout", type=Path, default=HELDOUT)
    parser.add_argument("--window", type=int, default=96,
                        help="the e5-small index's MaxP window in tokens (default 96)")
    parser.add_argument("--save", type=Path)
    parser.add_argument("--load", type=Path)
    parser.add_argument("--no-use", action="store_true",
                        help="collect without USE (faster); the options reading it are skipped")
    parser.add_argument("--code", action="store_true",
                        help="also the code-ness interaction options (CODE_OPTIONS)")
    parser.add_argument("--code-dev", action="store_true",
                        help="fit on the code set's dev half too; report its test half only")
    parser.add_argument("--only", help="options separated by \";\" (with auto|use and e5|minilm)")
    args = parser.parse_args()
    if args.load:
        sets = pickle.loads(args.load.read_bytes())
    else:
        sets = {"shipped": collect("shipped", load_shipped(ROOT / "data"), args.window,
                                    not args.no_use)}
        for name in HELD:
            sets[name] = collect(name, load_shipped(heldout_root(name, args.heldout)),
                                 args.window, not args.no_use)
        if (args.cookbook / "codebase_chunks.json").is_file():
            sets["cookbook"] = collect("cookbook", load_cookbook(args.cookbook), args.window,
                                       not args.no_use)
        if args.save:
            args.save.write_bytes(pickle.dumps(sets))
    annotate(sets)
    has_use = any(r["stages"]["e5"][1]["use"].any() for r in sets["shipped"]["questions"])
    options = {**OPTIONS, **(CODE_OPTIONS if args.code else {})}
    if args.only:
        keep = {"auto|use", "e5|minilm", *args.only.split(";")}
        options = {n: o for n, o in options.items() if n in keep}
    if not has_use:
        options = {n: o for n, o in options.items() if "use" not in (o[1] or [])}
    fitted_on = HELD if args.code_dev else FITTED_ON
    part = {f"{n} {s}": [r for r in sets[n]["questions"] if r["split"] == s]
            for n in ("shipped", *HELD) for s in ("dev", "test")}
    dev = [r for n in ("shipped", *fitted_on) for r in part[f"{n} dev"]]
    report = {"shipped test": part["shipped test"], "cookbook": sets.get("cookbook", {}).get(
        "questions", []), **{f"{n} test": part[f"{n} test"] for n in fitted_on},
        **{f"{n} (all)": sets[n]["questions"] for n in HELD if n not in fitted_on}}
    runs, rows = {}, []
    for name, (stage, columns) in options.items():
        model = fit(groups(dev, stage, columns)) if columns else None
        runs[name] = {k: scores(v, stage, columns, model) for k, v in report.items() if v}
        runs[name] = {"dev": kind_out(dev, stage, columns) if columns else scores(dev, stage),
                      **runs[name]}
        rows.append({"option": name, **{k: mean(t) for k, t in runs[name].items()}})
    print("Pass@5 / Pass@20 / MRR; dev = the dev halves of shipped, " + ", ".join(fitted_on)
          + "; dev out-of-fold by kind")
    print(pd.DataFrame(rows).set_index("option").to_string(), "\n")
    for base in [b for b in ("auto|use", "e5|minilm") if b in options]:
        print(f"Pass@5 against {base} (paired sign-flip test, 95 % bootstrap interval)")
        for name in options:
            print(f"{name:20} " + " | ".join(compared(runs[base], runs[name], "Pass@5")))
    print("\nMRR against e5|minilm (paired sign-flip test, 95 % bootstrap interval)")
    for name in options:
        print(f"{name:20} " + " | ".join(compared(runs["e5|minilm"], runs[name], "MRR")))
    kinds = pd.DataFrame({n: r["shipped test"].groupby("kind")["Pass@5"].mean()
                          for n, r in runs.items()})
    print("\nshipped test, Pass@5 per kind\n" + kinds.round(1).to_string())
    for name, (stage, columns) in options.items():
        if columns and name.startswith("e5|minilm"):
            model = fit(groups(dev, stage, columns))
            print(f"\n{name} fitted on all of dev: weight per unit of each scaled feature\n"
                  + "  ".join(f"{c} {w:.2f}" for c, w in zip(columns,
                                                           model.weights / model.scale)))
    columns = OPTIONS["e5|minilm"][1]
    print("\nPass@5 of each feature alone ranking the e5 first stage's top 150")
    alone = {c: {k: pass5_by(v, c) for k, v in {"dev": dev, **report}.items() if v}
             for c in [*columns, "first"]}
    print(pd.DataFrame(alone).T.round(1).to_string())
    if args.code:
        print("\nthe same on code candidates (code share >= 0.5) only, per set: e5 / minilm")
        print("\n".join(f"{k}: " + " / ".join(f"{pass5_by(v, c, code=True):.1f}"
                                               for c in ("e5", "minilm"))
                         for k, v in {"dev": dev, **report}.items() if v))


def compared(base: dict, other: dict, metric: str) -> list[str]:
    """One cell per set: `other`'s mean `metric` minus `base`'s, interval and p."""
    cells = []
    for k, a in base.items():
        t = paired_test(a[metric].astype(float), other[k][metric].astype(float))
        digits = 1 if metric == "Pass@5" else 3
        cells.append(f"{k} {t.mean_diff:+.{digits}f} [{t.low:+.{digits}f}, "
                     f"{t.high:+.{digits}f}] p={t.p_value:.2f}")
    return cells


def pass5_by(rows: list, name: str, code: bool = False) -> float:
    """Mean Pass@5 when the e5 first stage's candidates are ranked by feature `name` alone
    (`code`: only the candidates whose code share is at least 0.5, questions with none of
    their relevant chunks among them left out)."""
    out = []
    for r in rows:
        if r["items"]:
            ids, feats = r["stages"]["e5"]
            keep = np.flatnonzero(feats["code"] >= .5) if code else np.arange(len(ids))
            relevant = frozenset().union(*r["items"])
            if not any(ids[i] in relevant for i in keep):
                continue
            order = keep[np.argsort(-column(feats, name)[keep], kind="stable")]
            out.append(100 * pass_at_k([ids[i] for i in order], r["items"], 5))
    return float(np.mean(out))


if __name__ == "__main__":
    main()
