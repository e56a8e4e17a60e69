"""Lexical retrieval: tokenizers chosen by name, and BM25 over a sparse weight matrix.

What it is: the sparse half of hybrid retrieval. `get_tokenizer(name)` turns text into
terms (`words`, `english`, `code`, `korean`, `auto`); `BM25` indexes tokenized texts and
scores queries with exactly the scores of rank-bm25 0.2.2 `BM25Okapi` on the same tokens,
but precomputes every (term, document) weight into a scipy CSR matrix, so a query costs a
sum of a few matrix rows instead of a Python loop over all documents.

What it is not: not an inverted index on disk, not incremental (refit to add documents),
not a query language (no phrases, no boolean operators, no field weights).

Limits: the whole index lives in memory (about 12 bytes per distinct (term, document)
pair); `korean` needs kiwipiepy and its model (the `kiwipiepy-model` package) and costs
about 2 s to load once per process.

Tokenizer choice, measured (benchmarks/bench_tokenizers.py, Anthropic's cookbook code
corpus, BM25 Pass@5/10/20): words 59.7/68.0/77.0, english 71.3/78.2/83.0, code
78.6/85.0/87.6; with each chunk prefixed by its file path, code reaches 82.1/86.2/90.6.
Hence `auto` = `korean` for Hangul text, else `code`. No stemming: a Harman (1991)
S-stemmer on top of `code` moved Pass@k by +0.3 to +1.9 points, 5-9 queries better and
1-5 worse out of 248 (no sign test below p = 0.07), and it is unmeasured on prose.

Errors users can hit (unknown tokenizer, empty corpus, bad index folder) raise RagkitError.

Method: Okapi BM25 (Robertson & Zaragoza 2009, "The Probabilistic Relevance Framework:
BM25 and Beyond") with the IDF floor of rank-bm25 0.2.2 `BM25Okapi`.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from itertools import chain
from pathlib import Path
from typing import Callable, Iterable, Sequence

import numpy as np
from scipy import sparse

from ragkit.dense import top_k
from ragkit.documents import RagkitError

Tokenizer = Callable[[str], list[str]]

# --------------------------------------------------------------------------- tokenizers

_WORD = re.compile(r"\w+")
# A "compound" is words joined by path, dotted-name, scope or hyphen connectors:
# `a/b/c.py`, `os.path.join`, `std::vector`, `well-known`.
_COMPOUND = re.compile(r"\w+(?:[./\\:\-]+\w+)*")
# Parts of one identifier: `HTTPServer` -> HTTP, Server; `getX2` -> get, X, 2.
_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+|[^\W\d_A-Za-z]+")
# Characters kiwipiepy handles in the `korean` tokenizer: Hangul (syllables, jamo,
# compatibility jamo) and CJK ideographs (hanja).
_KOREAN_SCRIPT = re.compile(
    r"[\u1100-\u11ff\u3130-\u318f\uac00-\ud7a3\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+"
)
_HANGUL = re.compile(r"[\u1100-\u11ff\u3130-\u318f\uac00-\ud7a3]")

# English stopwords: the NLTK English list (179 words), written as \w+ tokens, so
# "don't" -> "don", "t" are both covered.
ENGLISH_STOPWORDS = frozenset(
    """
    a about above after again against ain all am an and any are aren as at be because been
    before being below between both but by can couldn d did didn do does doesn doing don down
    during each few for from further had hadn has hasn have haven having he her here hers
    herself him himself his how i if in into is isn it its itself just ll m ma me mightn more
    most mustn my myself needn no nor not now o of off on once only or other our ours
    ourselves out over own re s same shan she should shouldn so some such t than that the
    their theirs them themselves then there these they this those through to too under until
    up ve very was wasn we were weren what when where which while who whom why will with won
    wouldn y you your yours yourself yourselves
    """.split()
)

# Kiwi (Sejong) POS tags kept by `korean`: common/proper/dependent nouns and numerals, verb
# and adjective stems, roots, hanja. Dropped: particles J*, endings E*, affixes XP*/XS*,
# pronouns, determiners, adverbs, interjections, symbols (the Latin and digit parts are
# tokenized by `code`). Irregular-stem tags such as "VV-R" count as their base tag.
KOREAN_CONTENT_TAGS = frozenset({"NNG", "NNP", "NNB", "NR", "VV", "VA", "XR", "SH"})


def words(text: str) -> list[str]:
    """Lowercase `\\w+` runs, no stopwords: the parity reference with rank-bm25 (the
    cookbook README's BM25 floor 59.7 / 68.0 / 77.0 is measured on these)."""
    return _WORD.findall(text.lower())


def english(text: str) -> list[str]:
    """`words` without English stopwords (no stemming)."""
    return [t for t in _WORD.findall(text.lower()) if t not in ENGLISH_STOPWORDS]


def identifier_parts(word: str) -> list[str]:
    """Lowercased parts of one `\\w+` identifier: snake_case, camelCase, PascalCase,
    acronyms and digit runs (`HTTPServer2_new` -> http, server, 2, new)."""
    return [p.lower() for piece in word.split("_") for p in _PART.findall(piece)]


def code(text: str) -> list[str]:
    """Code-aware tokens: each identifier lowercased AND its parts.

    `get_user_name` -> get_user_name, get, user, name; `HTTPServer` -> httpserver, http,
    server; `a/b/c.py` -> a, b, c, py; `foo.bar` -> foo, bar. A plain single word
    (natural language) is dropped when it is an English stopword; the words and parts of
    identifiers, paths and dotted names are all kept.
    """
    tokens: list[str] = []
    for match in _COMPOUND.finditer(text):
        pieces = _WORD.findall(match.group())
        for word in pieces:
            lower, parts = word.lower(), identifier_parts(word)
            if parts == [lower]:  # a plain word: no case change, underscore or digit run
                if len(pieces) > 1 or lower not in ENGLISH_STOPWORDS:
                    tokens.append(lower)
                continue
            tokens.append(lower)
            tokens.extend(parts)  # `__init__` -> __init__, init
    return tokens


@lru_cache(maxsize=1)
def _kiwi():
    """The process-wide Kiwi analyser, created on first use (loads the model, ~2 s)."""
    try:
        from kiwipiepy import Kiwi
    except ImportError as err:  # pragma: no cover - kiwipiepy is a dependency
        raise RagkitError(
            "the 'korean' tokenizer needs kiwipiepy and kiwipiepy-model: "
            "pip install kiwipiepy kiwipiepy-model"
        ) from err
    return Kiwi()


def korean(text: str) -> list[str]:
    """Korean content morphemes (kiwipiepy) plus `code` tokens for everything else.

    `청약철회는 구매일로부터 7일 이내에 가능합니다.` -> 청약, 철회, 구매, 일, 7, 일, 이내, 가능.
    Hangul and hanja go through Kiwi and only `KOREAN_CONTENT_TAGS` are kept; the text
    between them (Latin words, identifiers, numbers) is tokenized by `code`, so
    `HTTPServer를` gives httpserver, http, server. Tokens come in text order.
    """
    found: list[tuple[int, str]] = []
    if _KOREAN_SCRIPT.search(text):
        for tok in _kiwi().tokenize(text):
            if tok.tag.split("-")[0] in KOREAN_CONTENT_TAGS and _KOREAN_SCRIPT.search(tok.form):
                found.append((tok.start, tok.form))
    rest = _KOREAN_SCRIPT.sub(lambda m: " " * len(m.group()), text)
    for match in _COMPOUND.finditer(rest):
        found.extend((match.start(), t) for t in code(match.group()))
    found.sort(key=lambda pair: pair[0])
    return [t for _, t in found]


def auto(text: str) -> list[str]:
    """`korean` when the text contains Hangul, else `code` (measured best on the cookbook
    code corpus, and it matches how `korean` tokenizes Latin words)."""
    return korean(text) if _HANGUL.search(text) else code(text)


_REGISTRY: dict[str, Tokenizer] = {
    "words": words,
    "english": english,
    "code": code,
    "korean": korean,
    "auto": auto,
}
TOKENIZERS: tuple[str, ...] = tuple(_REGISTRY)


def get_tokenizer(name: str) -> Tokenizer:
    """The tokenizer registered under `name` (one of `TOKENIZERS`)."""
    try:
        return _REGISTRY[name]
    except (KeyError, TypeError):
        raise RagkitError(
            f"unknown tokenizer {name!r}; known tokenizers: {', '.join(TOKENIZERS)}"
        ) from None


# --------------------------------------------------------------------------- BM25


def okapi_idf(df: np.ndarray, n_docs: int, epsilon: float) -> np.ndarray:
    """rank-bm25 0.2.2 BM25Okapi IDF: log(N - n + 0.5) - log(n + 0.5), and every negative
    value replaced by `epsilon` times the mean raw IDF over the vocabulary."""
    raw = np.log(n_docs - df + 0.5) - np.log(df + 0.5)
    if raw.size == 0:
        return raw
    # A sequential sum (cumsum), as rank-bm25's loop adds them; np.mean sums pairwise and
    # can differ in the last bit.
    average_idf = np.cumsum(raw)[-1] / raw.size
    return np.where(raw < 0, epsilon * average_idf, raw)


def okapi_tf(tf: np.ndarray, doc_len: np.ndarray, avgdl: float, k1: float, b: float) -> np.ndarray:
    """The BM25 term-frequency factor tf·(k1+1) / (tf + k1·(1 − b + b·|d|/avgdl)),
    written in the same operation order as rank-bm25 so values agree to the last bit."""
    return tf * (k1 + 1) / (tf + k1 * (1 - b + b * doc_len / avgdl))


class BM25:
    """Okapi BM25 with the scores of rank-bm25 0.2.2 `BM25Okapi`.

    For a query q (a bag of terms, repeats counted) and a document d of |d| tokens, in a
    corpus of N documents with mean length avgdl:

        score(q, d) = Σ_{t in q} idf(t) · tf(t,d)·(k1+1) / (tf(t,d) + k1·(1 − b + b·|d|/avgdl))
        idf(t)      = log(N − n(t) + 0.5) − log(n(t) + 0.5)     (n(t): documents containing t)

    and an idf below zero (a term in more than half the documents) is replaced by
    epsilon · mean(raw idf over the vocabulary). Terms outside the vocabulary score 0.
    Source: Robertson & Zaragoza 2009, "The Probabilistic Relevance Framework: BM25 and
    Beyond", section 3; the IDF floor is rank-bm25 0.2.2 `BM25Okapi._calc_idf`.

    Inherited quirks, kept for parity: a term in exactly half of the documents has idf 0;
    in a 2-document corpus no term has a positive idf, so scores are 0 or negative. Where
    rank-bm25 fails (every document empty: division by zero) this gives all-zero scores.

    Usage:
        bm25 = BM25.fit(texts, tokenizer="code")
        indices, scores = bm25.search("how is the lock released", k=10)
    """

    def __init__(
        self,
        k1: float = 1.5,
        b: float = 0.75,
        epsilon: float = 0.25,
        tokenizer: str | Tokenizer = "words",
    ) -> None:
        if not k1 >= 0:
            raise RagkitError(f"BM25 k1 must be >= 0, got {k1!r}")
        if not 0 <= b <= 1:
            raise RagkitError(f"BM25 b must be in [0, 1], got {b!r}")
        self.k1, self.b, self.epsilon = float(k1), float(b), float(epsilon)
        if callable(tokenizer):
            self.tokenizer_name: str | None = None
            self.tokenize: Tokenizer = tokenizer
        else:
            self.tokenizer_name, self.tokenize = tokenizer, get_tokenizer(tokenizer)
        self.vocabulary: dict[str, int] = {}
        self.idf = np.empty(0)
        self.doc_len = np.empty(0, dtype=np.int64)
        self.avgdl = 0.0
        self.weights = sparse.csr_matrix((0, 0))  # (terms × documents)

    # ------------------------------------------------------------------ building

    @classmethod
    def fit(cls, texts: Sequence[str], *, progress: bool = False, **params) -> BM25:
        """Tokenize `texts` with the chosen tokenizer and index them."""
        model = cls(**params)
        items = _progress(texts, progress, "tokenize")
        return model._index([model.tokenize(text) for text in items])

    @classmethod
    def fit_tokens(cls, corpus: Sequence[Sequence[str]], **params) -> BM25:
        """Index documents that are already token lists (queries given as lists too)."""
        return cls(**params)._index(corpus)

    def _index(self, corpus: Sequence[Sequence[str]]) -> BM25:
        if len(corpus) == 0:
            raise RagkitError("BM25 needs at least one document; the corpus is empty")
        # Term ids in first-seen order (rank-bm25's dict order, which its IDF mean follows).
        flat = list(chain.from_iterable(corpus))
        vocab = {term: i for i, term in enumerate(dict.fromkeys(flat))}
        rows = np.fromiter(map(vocab.__getitem__, flat), dtype=np.int64, count=len(flat))
        doc_len = np.fromiter(map(len, corpus), dtype=np.int64, count=len(corpus))
        cols = np.repeat(np.arange(len(corpus)), doc_len)
        tf = sparse.csr_matrix(
            (np.ones(rows.size), (rows, cols)), shape=(len(vocab), len(corpus))
        )
        tf.sum_duplicates()
        self.vocabulary, self.doc_len = vocab, doc_len
        self.avgdl = float(doc_len.sum() / len(corpus))
        df = np.diff(tf.indptr)
        self.idf = okapi_idf(df, len(corpus), self.epsilon)
        if tf.nnz:
            factor = okapi_tf(tf.data, doc_len[tf.indices], self.avgdl, self.k1, self.b)
            tf.data = np.repeat(self.idf, df) * factor
        self.weights = tf
        return self

    # ------------------------------------------------------------------ querying

    @property
    def n_docs(self) -> int:
        return int(self.doc_len.size)

    def _query_ids(self, query: str | Sequence[str]) -> np.ndarray:
        """Vocabulary ids of the query's known terms, in query order, repeats kept."""
        tokens = self.tokenize(query) if isinstance(query, str) else query
        vocab = self.vocabulary
        return np.array([vocab[t] for t in tokens if t in vocab], dtype=np.int64)

    def scores(self, query: str | Sequence[str]) -> np.ndarray:
        """BM25 score of every document for `query` (text, or a token list), like
        rank-bm25's `get_scores`.

        Each query term adds its row of precomputed weights to the documents that contain
        it, in query order (repeats included), the order rank-bm25 adds them in, so the
        scores are bit-for-bit rank-bm25's.
        """
        w, out = self.weights, np.zeros(self.n_docs)
        for i in self._query_ids(query):
            row = slice(w.indptr[i], w.indptr[i + 1])
            out[w.indices[row]] += w.data[row]  # a row names each document at most once
        return out

    def search(self, query: str | Sequence[str], k: int) -> tuple[np.ndarray, np.ndarray]:
        """The k best documents as (indices, scores), best first; ties go to the lower index.

        Returns min(k, n_docs) entries, including documents with score 0 when fewer than
        k documents match.
        """
        return top_k(self.scores(query), k)

    def search_many(
        self, queries: Iterable[str | Sequence[str]], k: int, progress: bool = False
    ) -> list[tuple[np.ndarray, np.ndarray]]:
        """`search` for each query, with an optional progress bar.

        (A batched sparse product, queries × terms times terms × documents, measured slower
        than this loop: its output is dense and the loop already touches only postings.)
        """
        queries = list(queries)
        return [self.search(q, k) for q in _progress(queries, progress, "bm25 search")]

    # ------------------------------------------------------------------ persistence

    def save(self, folder: str | Path) -> Path:
        """Write `bm25.npz` (weights, idf, lengths) and `bm25.json` (parameters,
        tokenizer name, vocabulary) into `folder`. No pickle."""
        if self.tokenizer_name is None:
            raise RagkitError(
                "cannot save a BM25 index built with a custom tokenizer function; "
                f"use a named tokenizer ({', '.join(TOKENIZERS)})"
            )
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        w = self.weights
        np.savez(
            folder / "bm25.npz",
            data=w.data, indices=w.indices, indptr=w.indptr,
            idf=self.idf, doc_len=self.doc_len,
        )
        meta = {
            "format": "ragkit.bm25", "version": 1,
            "k1": self.k1, "b": self.b, "epsilon": self.epsilon,
            "tokenizer": self.tokenizer_name, "avgdl": self.avgdl,
            "n_docs": self.n_docs, "vocabulary": list(self.vocabulary),
        }
        (folder / "bm25.json").write_text(json.dumps(meta, ensure_ascii=False), encoding="utf-8")
        return folder

    @classmethod
    def load(cls, folder: str | Path) -> BM25:
        """Read an index written by `save`."""
        folder = Path(folder)
        meta_path, arrays_path = folder / "bm25.json", folder / "bm25.npz"
        for path in (meta_path, arrays_path):
            if not path.is_file():
                raise RagkitError(f"{path}: missing; not a BM25 index folder written by BM25.save")
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as err:
            raise RagkitError(
                f"{meta_path}, line {err.lineno}: invalid JSON ({err.msg})") from None
        if meta.get("format") != "ragkit.bm25" or meta.get("version") != 1:
            raise RagkitError(f"{meta_path}: fields 'format'/'version' are "
                             f"{meta.get('format')!r}/{meta.get('version')!r}, "
                             "expected 'ragkit.bm25'/1")
        model = cls(k1=meta["k1"], b=meta["b"], epsilon=meta["epsilon"],
                    tokenizer=meta["tokenizer"])
        with np.load(arrays_path, allow_pickle=False) as arrays:
            vocab = meta["vocabulary"]
            model.weights = sparse.csr_matrix(
                (arrays["data"], arrays["indices"], arrays["indptr"]),
                shape=(len(vocab), meta["n_docs"]),
            )
            model.idf, model.doc_len = arrays["idf"], arrays["doc_len"]
        model.vocabulary = {term: i for i, term in enumerate(vocab)}
        model.avgdl = meta["avgdl"]
        return model

    def __repr__(self) -> str:
        return (f"BM25(k1={self.k1}, b={self.b}, epsilon={self.epsilon}, "
                f"tokenizer={self.tokenizer_name!r}, docs={self.n_docs}, "
                f"terms={len(self.vocabulary)})")


def _progress(items, enabled: bool, desc: str):
    """`items`, wrapped in a tqdm bar when `enabled`."""
    if not enabled:
        return items
    from tqdm import tqdm

    return tqdm(items, desc=desc)
