"""Candidate features and learners for the offline reranker, measured as its docstring table is.

Run: python benchmarks/bench_rerank_features.py [path/to/cookbook] [--depth 150]

For the shipped dev and test splits and the cookbook set it builds the default index
(structural context, e5-small embedder), takes the default first stage's top `--depth`
candidates and computes, per candidate, the shipped features (`ragkit.rerank.features`) and
these extra ones (each min-max scaled within the query's candidates):
- `use`: USE multilingual v3 cosine with the whole chunk (context + text), beside the
  shipped `second_maxp` over its windows (one extra embedding pass per corpus, timed);
- `nb_dense` / `nb_bm25`: the better of the previous and next chunk of the same document
  (chunk order) by MiniLM MaxP / BM25 (neighbour evidence);
- `doc_bm25`: BM25 of the whole document (its chunks' text as one BM25 document);
- `maxp32`: MiniLM MaxP over 32-token windows (finer MaxP; an extra pass, timed);
- `bm25_join`: BM25 of the query with adjacent words also joined into one term when the
  join is in the vocabulary ("diff executor" → diffexecutor): query-side identifier expansion;
- `ident_def`: the share of the query's code identifiers (`backticked`, `call()`, snake_case,
  camelCase) that the chunk defines (`class X`, `fn x`, `def x`, `x(...) {`, `const X`, …).
Each feature set is fitted by pairwise logistic regression (as `ragkit.train_reranker`) and,
for the richest sets, by gradient boosting (scikit-learn HistGradientBoostingClassifier,
pointwise) and a small MLP. Dev numbers are out-of-fold: 5-fold (seeded) and
leave-one-question-kind-out cross-validation over dev questions; test and the cookbook set are
scored by the model fitted on all of dev. It also prints the first stage's recall (Pass@150,
Pass@300 with `--depth 300`) on each set. `--candidates N --depth N` measure a deeper first
stage; `--save FILE` keeps the collected features and `--load FILE` re-fits from them
(`--sets`, `--no-nonlinear` choose what to fit); `--no-use` skips the whole-chunk USE pass
and the sets that need it. Nothing here is used by ragkit at run time.
"""
from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

import numpy as np

import ragkit
from ragkit.dense import embed_chunks
from ragkit.evaluate import judge, per_query, summarize
from ragkit.lexical import BM25
from ragkit.pipeline import IndexConfig, Pipeline, SearchConfig
from ragkit.rerank.features import (FEATURES, IndexFeatures, bm25_scores, maxp_scores,
                                    normalize)

ROOT = Path(__file__).resolve().parent.parent
FOUR = [f for f in FEATURES if f != "second_maxp"]  # the reranker without its second view
SETS = {
    "shipped": list(FEATURES),
    "without second_maxp": FOUR,
    "+use": [*FEATURES, "use"],
    "+nb": [*FEATURES, "nb_dense", "nb_bm25"],
    "+doc_bm25": [*FEATURES, "doc_bm25"],
    "+nb +doc_bm25": [*FEATURES, "nb_dense", "nb_bm25", "doc_bm25"],
    "+use +nb +doc_bm25": [*FEATURES, "use", "nb_dense", "nb_bm25", "doc_bm25"],
    "+bm25_join": [*FEATURES, "bm25_join"],
    "+ident_def": [*FEATURES, "ident_def"],
    "+maxp32": [*FEATURES, "maxp32"],
    "+maxp32 +doc_bm25": [*FEATURES, "maxp32", "doc_bm25"],
    "+maxp32 +use +nb +doc_bm25": [*FEATURES, "maxp32", "use", "nb_dense", "nb_bm25",
                                   "doc_bm25"],
}
NONLINEAR = ("shipped", "+use +nb +doc_bm25", "+maxp32 +use +nb +doc_bm25")
_IDENT = re.compile(r"`([^`]+)`|\b([A-Za-z_]\w*)(\(\))?")
_KEYWORD = r"(?:class|struct|enum|interface|trait|fn|def|function|type|impl|union|namespace" \
           r"|define|const|static|let|var|val)"


def query_identifiers(query: str) -> list[str]:
    """Code identifiers the query names: backticked, `name()`, snake_case, camelCase or with
    two capitals (acronyms included)."""
    found = []
    for match in _IDENT.finditer(query):
        if match.group(1):
            found += re.findall(r"[A-Za-z_]\w*", match.group(1))
            continue
        word = match.group(2)
        if (match.group(3) or "_" in word.strip("_") or re.search(r"[a-z][A-Z]", word)
                or (len(word) > 2 and re.search(r"[A-Z].*[A-Z]", word))):
            found.append(word)
    return list(dict.fromkeys(found))


def defines(identifier: str, text: str) -> bool:
    """Whether `text` holds a definition of `identifier` (a keyword before it, or a call
    signature followed by a body)."""
    name = re.escape(identifier)
    return bool(re.search(rf"\b{_KEYWORD}\s+(?:[\w:<>,*&\[\] ]+\s+)?{name}\b", text)
                or re.search(rf"\b{name}\s*(?:<[^>]*>)?\s*\([^;{{}}]*\)\s*(?:const\s*)?"
                             rf"(?:throws [\w., ]+)?(?:->[^{{;]+)?\{{", text))


class Extras:
    """The extra per-candidate features of one index (see the module docstring)."""

    def __init__(self, pipeline: Pipeline, use, with_maxp32: bool) -> None:
        self.pipeline, self.use, self.cost = pipeline, use, {}
        chunks = pipeline.chunks
        if use is not None:
            start = time.perf_counter()
            self.use_chunk = use.embed([c.indexed_text for c in chunks])
            self.cost["use chunk pass"] = time.perf_counter() - start
        self.prev = np.array([i - 1 if i and chunks[i - 1].doc_id == c.doc_id else -1
                              for i, c in enumerate(chunks)])
        self.next = np.array([i + 1 if i + 1 < len(chunks) and chunks[i + 1].doc_id == c.doc_id
                              else -1 for i, c in enumerate(chunks)])
        doc_ids = list(dict.fromkeys(c.doc_id for c in chunks))
        self.doc_of = {d: n for n, d in enumerate(doc_ids)}
        joined = {d: [] for d in doc_ids}
        for c in chunks:
            joined[c.doc_id].append(c.indexed_text)
        self.doc_bm25 = BM25.fit(["\n\n".join(joined[d]) for d in doc_ids],
                                 tokenizer=pipeline.config.tokenizer)
        self.maxp32 = None
        if with_maxp32:
            start = time.perf_counter()
            self.maxp32 = embed_chunks(pipeline.embedder, chunks, 32, False)
            self.cost["maxp32 pass"] = time.perf_counter() - start
        self.position = {c.id: n for n, c in enumerate(chunks)}

    def joined_query(self, query: str) -> list[str]:
        """The query's BM25 tokens plus every adjacent pair joined, when the join is a term."""
        bm25 = self.pipeline.bm25
        tokens = bm25.tokenize(query)
        words = re.findall(r"\w+", query.lower())
        joins = [a + b for a, b in zip(words, words[1:]) if a + b in bm25.vocabulary]
        joins += [a + "_" + b for a, b in zip(words, words[1:])
                  if a + "_" + b in bm25.vocabulary]
        return tokens + joins

    def __call__(self, query: str, candidates) -> dict[str, np.ndarray]:
        p = self.pipeline
        pos = np.array([self.position[c.chunk.id] for c in candidates], dtype=np.int64)
        qv = p.embedder.embed([query], input_type="query")[0]
        all_dense = p.dense.chunk_scores(qv[None])[0].astype(np.float64)
        all_bm25 = np.asarray(p.bm25.scores(query), dtype=np.float64)

        def neighbour(scores):
            floor = scores.min()
            prev = np.where(self.prev[pos] >= 0, scores[self.prev[pos]], floor)
            nxt = np.where(self.next[pos] >= 0, scores[self.next[pos]], floor)
            return normalize(np.maximum(prev, nxt))

        docs = np.array([self.doc_of[c.chunk.doc_id] for c in candidates])
        names = query_identifiers(query)
        out = {
            "nb_dense": neighbour(all_dense),
            "nb_bm25": neighbour(all_bm25),
            "doc_bm25": normalize(self.doc_bm25.scores(query)[docs]),
            "bm25_join": normalize(bm25_scores(p.bm25, self.joined_query(query), pos)),
            "ident_def": np.array([sum(defines(n, c.chunk.indexed_text) for n in names)
                                   / max(1, len(names)) for c in candidates]),
        }
        if self.use is not None:
            uq = self.use.embed([query], input_type="query")[0]
            out["use"] = normalize(self.use_chunk[pos] @ uq)
        if self.maxp32 is not None:
            out["maxp32"] = normalize(maxp_scores(self.maxp32, qv, pos))
        return out


def collect(data, use, depth: int, with_maxp32: bool, label: str, candidates: int = 100):
    """Per judged question: (id, kind, candidate ids, {feature: column}, labels)."""
    start = time.perf_counter()
    pipeline = Pipeline.build(data.documents, IndexConfig(), chunks=data.chunks, progress=False)
    build = time.perf_counter() - start
    judgments = judge(data.queries, data.documents, pipeline.chunks)
    judged = [q for q in data.queries if q.id in judgments]
    found = pipeline.candidates([q.text for q in judged], SearchConfig(candidates=candidates,
                                                                rerank_candidates=depth))
    base, extras = IndexFeatures(pipeline), Extras(pipeline, use, with_maxp32)
    rows = []
    for q, cands in zip(judged, found):
        cols = dict(zip(FEATURES, base(q.text, cands).T))
        cols.update(extras(q.text, cands))
        relevant = frozenset().union(*judgments[q.id])
        rows.append((q.id, q.kind, [c.chunk.id for c in cands], cols,
                     np.array([c.chunk.id in relevant for c in cands], dtype=int)))
    print(f"{label}: {len(judged)} questions, {len(pipeline.chunks)} chunks, build {build:.1f} s, "
          + ", ".join(f"{k} {v:.1f} s" for k, v in extras.cost.items()), flush=True)
    return rows, judgments


def matrix(row, names):
    return np.column_stack([row[3][n] for n in names])


def fit_linear(rows, names):
    from sklearn.linear_model import LogisticRegression
    xs = np.vstack([matrix(r, names) for r in rows])
    mean, scale = xs.mean(0), np.where(xs.std(0) > 0, xs.std(0), 1.0)
    px, py = [], []
    for r in rows:
        x, y = (matrix(r, names) - mean) / scale, r[4]
        for good in x[y == 1]:
            bad = x[y == 0]
            px += [good - bad, bad - good]
            py += [np.ones(len(bad)), np.zeros(len(bad))]
    model = LogisticRegression(C=1.0, fit_intercept=False, max_iter=1000).fit(
        np.vstack(px), np.concatenate(py))
    w = model.coef_.ravel()
    return lambda x: ((x - mean) / scale) @ w


def fit_hgb(rows, names):
    from sklearn.ensemble import HistGradientBoostingClassifier
    x = np.vstack([matrix(r, names) for r in rows])
    y = np.concatenate([r[4] for r in rows])
    model = HistGradientBoostingClassifier(max_iter=100, learning_rate=0.05, max_leaf_nodes=8,
                                           min_samples_leaf=40, l2_regularization=1.0,
                                           random_state=0).fit(x, y)
    return lambda m: model.predict_proba(m)[:, 1]


def fit_mlp(rows, names):
    from sklearn.neural_network import MLPClassifier
    x = np.vstack([matrix(r, names) for r in rows])
    y = np.concatenate([r[4] for r in rows])
    model = MLPClassifier(hidden_layer_sizes=(8,), alpha=1e-2, max_iter=400,
                          random_state=0).fit(x, y)
    return lambda m: model.predict_proba(m)[:, 1]


LEARNERS = {"linear": fit_linear, "hgb": fit_hgb, "mlp": fit_mlp}


def rank(rows, names, score) -> dict[str, list[str]]:
    run = {}
    for r in rows:
        s = score(matrix(r, names))
        best = sorted(range(len(r[2])), key=lambda i: -s[i])[:20]
        run[r[0]] = [r[2][i] for i in best]
    return run


def metrics(run, judgments) -> tuple[float, float, float, float]:
    m = summarize(per_query(run, {q: judgments[q] for q in run}))
    return m["Pass@5"], m["Pass@10"], m["Pass@20"], m["MRR"]


def cross_validated(rows, names, learner, folds) -> dict[str, list[str]]:
    run = {}
    for held in folds:
        train = [r for r in rows if r[0] not in held]
        score = LEARNERS[learner](train, names)
        run.update(rank([r for r in rows if r[0] in held], names, score))
    return run


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("cookbook", nargs="?", type=Path,
                        default=ROOT.parent / "shared" / "data" / "cookbook")
    parser.add_argument("--depth", type=int, default=150)
    parser.add_argument("--candidates", type=int, default=100,
                        help="each retriever's depth before fusion (SearchConfig.candidates)")
    parser.add_argument("--no-maxp32", action="store_true", help="skip the 32-token pass")
    parser.add_argument("--no-use", action="store_true", help="skip the whole-chunk USE pass")
    parser.add_argument("--load", type=Path, help="read the collected features from this pickle")
    parser.add_argument("--save", type=Path, help="write the collected features to this pickle")
    parser.add_argument("--sets", nargs="*", help="feature sets to fit (default: all)")
    parser.add_argument("--nonlinear", action=argparse.BooleanOptionalAction, default=True,
                        help="also fit gradient boosting and the MLP on the richest sets")
    args = parser.parse_args(argv)
    if args.load:
        import pickle
        return report(pickle.loads(args.load.read_bytes()), args.depth, sets_named=args.sets,
                      nonlinear=args.nonlinear)
    from ragkit.embed import CachedEmbedder
    from ragkit.embed.use_multilingual import USEMultilingual
    use = None if args.no_use else CachedEmbedder(USEMultilingual())
    shipped = ragkit.load_shipped(ROOT / "data")
    sets = {"dev": collect(shipped.split("dev"), use, args.depth, not args.no_maxp32, "dev",
                          args.candidates),
            "test": collect(shipped.split("test"), use, args.depth, not args.no_maxp32, "test",
                           args.candidates),
            "cookbook": collect(ragkit.load_cookbook(args.cookbook), use, args.depth,
                                not args.no_maxp32, "cookbook", args.candidates)}
    if args.save:
        import pickle
        args.save.write_bytes(pickle.dumps(sets))
    return report(sets, args.depth, sets_named=args.sets, nonlinear=args.nonlinear)


def report(sets, depth: int, sets_named=None, nonlinear: bool = True) -> int:
    """Print first-stage recall and every feature set's cross-validated and held-out numbers."""
    for name, (rows, judgments) in sets.items():
        first = {r[0]: r[2] for r in rows}
        recall = {k: summarize(per_query(first, {q: judgments[q] for q in first}, ks=(k,)))
                  [f"Pass@{k}"] for k in sorted({20, 150, depth}) if k <= depth}
        print(f"{name} first stage: " + ", ".join(f"Pass@{k} {v:.1f}" for k, v in recall.items()))
    dev, dev_j = sets["dev"]
    ids = [r[0] for r in dev]
    rng = np.random.default_rng(0)
    shuffled = rng.permutation(ids)
    five = [set(shuffled[i::5]) for i in range(5)]
    kinds = [{r[0] for r in dev if r[1] == k} for k in sorted({r[1] for r in dev})]
    out = []
    base_row = {"candidate": "no reranking", "learner": "-"}
    for label, (rows, judgments) in sets.items():
        run = {r[0]: r[2][:20] for r in rows}
        base_row[label] = metrics(run, judgments)
    base_row["dev 5-fold"] = base_row["dev kind-out"] = base_row.pop("dev")
    out.append(base_row)
    have = set(dev[0][3])
    for set_name, names in SETS.items():
        if not set(names) <= have or (sets_named and set_name not in sets_named):
            continue
        richer = nonlinear and set_name in NONLINEAR
        for learner in ("linear", "hgb", "mlp") if richer else ("linear",):
            row = {"candidate": set_name, "learner": learner,
                   "dev 5-fold": metrics(cross_validated(dev, names, learner, five), dev_j),
                   "dev kind-out": metrics(cross_validated(dev, names, learner, kinds), dev_j)}
            score = LEARNERS[learner](dev, names)
            for label in ("test", "cookbook"):
                rows, judgments = sets[label]
                row[label] = metrics(rank(rows, names, score), judgments)
            out.append(row)
            print(_fmt(row), flush=True)
    print("\nPass@5 / Pass@10 / Pass@20 / MRR")
    for row in out:
        print(_fmt(row))
    return 0


def _fmt(row) -> str:
    cells = [f"{row['candidate']:<28} {row['learner']:<6}"]
    for key in ("dev 5-fold", "dev kind-out", "test", "cookbook"):
        p5, p10, p20, mrr = row[key]
        cells.append(f"{p5:5.1f} {p10:5.1f} {p20:5.1f} {mrr:.3f}")
    return " | ".join(cells)


if __name__ == "__main__":
    sys.exit(main())
