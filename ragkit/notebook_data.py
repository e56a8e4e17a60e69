"""What a notebook needs from the data it runs on, decided here rather than in the notebooks.

The notebooks take `data_dir` (any folder in the shipped layout, `ragkit.datasets`), and
their Markdown describes the run on the shipped data (`data/`). Re-exported by
`ragkit.cookbook`:

- `is_shipped(data_dir)`, `data_label(data_dir)`, `data_banner(data_dir)`: whether a run
  reads the shipped data; on other data one visible banner says that the narrative is the
  shipped run's and that this run's numbers are in the tables, figures and Finding lines (on
  the shipped data it shows nothing, so committed outputs stay as they are);
  `parameters_banner()` (called by `data_banner`) says the same when `ragkit cookbook
  run|sweep` changed a parameter from its default;
- `skip_unless(have, why)`: the one way a section that needs what the data lacks (Korean
  questions, a replay log) is skipped — one short line, never an exception or empty figure;
- what a section needs, found in the data: `korean_questions`, `replay_path`,
  `document_kind`, `example_question` (01), `context_example` (02);
- `leaders`, `joined` (`ragkit.text_stats`): the methods tied at the top, named in a finding;
- `raw_corpus(data_dir, documents)`: the folder of raw files that grep searches (CRAG's
  fallback in 06, the agent's tools in 07) — `corpus/`, or for a `documents.jsonl` the
  documents written once as files into `$RAGKIT_HOME/cache/corpora/` (07's long-context
  parts: `ragkit.agent.long_context`).

What it is not: a data loader (`ragkit.datasets`) nor a checker of the layout; unreadable
data fails there, in one line naming the file.
"""
from __future__ import annotations

import hashlib
import json
import re
import sys
from collections.abc import Mapping, Sequence, Sized
from pathlib import Path
from typing import TYPE_CHECKING

from filelock import FileLock

from ragkit.atomic import replace_folder
from ragkit.chunking import chunk_document
from ragkit.corpus_cache import corpora_folder
from ragkit.documents import Chunk, Document, Query, RagkitError
from ragkit.loaders.folder import escaped
from ragkit.money import dollars_kept
from ragkit.notebook_params import changed_in_run, check_folder
from ragkit.text_stats import joined  # noqa: F401 (re-exported for the notebooks)

if TYPE_CHECKING:
    import pandas as pd

_HANGUL = re.compile(r"[\u1100-\u11ff\u3130-\u318f\uac00-\ud7a3]")  # as ragkit.lexical
ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ROOT / "data"
BANNER = ("**Your data ({name}).** The text cells of this notebook describe its run on the "
          "shipped data (`data/`); the numbers of this run are in the tables, figures and "
          "**Finding** lines below.")
PARAMETERS_BANNER = ("**Your parameters ({given}).** The text cells of this notebook describe "
                     "its run with the defaults of its `parameters` cell; the numbers of this "
                     "run are in the tables, figures and **Finding** lines below.")


def is_shipped(data_dir: str | Path) -> bool:
    """Whether `data_dir` is the shipped data folder of this checkout (by its resolved path;
    a copy elsewhere counts as other data)."""
    try:
        return Path(data_dir).resolve() == SHIPPED.resolve()
    except OSError:
        return False


def data_label(data_dir: str | Path) -> str:
    """How captions and findings name the data: "shipped", or the folder's name."""
    return "shipped" if is_shipped(data_dir) else Path(data_dir).resolve().name


def prose(markdown: str):
    """`markdown` as IPython's `Markdown`, with every dollar sign written `DOLLAR`."""
    from IPython.display import Markdown  # deferred: only notebooks display
    return Markdown(dollars_kept(markdown))


def _show(markdown: str) -> None:
    from IPython.display import display  # deferred: only notebooks display
    display(prose(markdown))


def data_banner(data_dir: str | Path) -> None:
    """Show the banner (see module) when `data_dir` is not the shipped data; then
    `parameters_banner`'s. A `data_dir` that is no folder is refused naming the parameter
    (`check_folder`): `-p data_dir=/my/data` failed a cell later on "/my/data/corpus: not a
    folder"."""
    check_folder("data_dir", data_dir)
    if not is_shipped(data_dir):
        _show(BANNER.format(name=code_span(data_label(data_dir))))
    parameters_banner(sys._getframe(1).f_globals)  # the notebook's namespace


def parameters_banner(values: Mapping[str, object] | None = None) -> None:
    """Show a banner when `ragkit cookbook run|sweep` changed a parameter from its default
    (`CHANGED_ENV`; with `tokenizer = "words"` notebook 01's sentences compared numbers its
    tables no longer showed), or `values` differ from the defaults in JupyterLab
    (`edited_parameters`); else nothing."""
    values = sys._getframe(1).f_globals if values is None else values  # 05 calls it itself
    changed = changed_in_run(values)
    if changed:
        _show(PARAMETERS_BANNER.format(
            given=", ".join(code_span(f"{name} = {value!r}") for name, value in changed.items())))


def code_span(text: str) -> str:
    """`text` as a CommonMark code span that shows it whole: fenced by one backtick more than
    its longest run of backticks (padded by a space at a backtick end, or at two space ends,
    which CommonMark strips), control characters escaped. A folder named ``my`data`` closed
    the banner's single-backtick span early and showed the rest as Markdown."""
    text = escaped(text)
    fence = "`" * (max(map(len, re.findall("`+", text)), default=0) + 1)
    spaced = text[:1] == text[-1:] == " " and text.strip(" ")
    pad = " " if text[:1] == "`" or text[-1:] == "`" or spaced else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def skip_unless(have: object, why: str, what: str = "section") -> bool:
    """True when `have` (a flag, a collection, a path or None) is there; otherwise show
    "*{why}: {what} skipped.*" and return False, so the section's cell runs nothing."""
    present = have is not None and (len(have) > 0 if isinstance(have, Sized) else bool(have))
    if not present:
        _show(f"*{why}: {what} skipped.*")
    return present


def leaders(values: "pd.Series", decimals: int = 1) -> list[str]:
    """The labels of `values` that share its best value as shown (rounded to `decimals`),
    so a finding names every method tied at the top instead of the first of them."""
    shown = values.round(decimals)
    return [str(label) for label in shown.index[shown == shown.max()]]


def korean_questions(questions: Sequence[Query], judgments: Mapping[str, object]
                     ) -> list[Query]:
    """The judged questions written in Korean: `lang: ko`, or without a `lang` field, with
    Hangul in the text (a question file written by hand seldom says its language; notebook
    01 said "No Korean questions" beside a table that counted one)."""
    return [q for q in questions if q.id in judgments and
            (q.metadata.get("lang") == "ko" or
             ("lang" not in q.metadata and _HANGUL.search(q.text)))]


def replay_path(data_dir: str | Path) -> Path | None:
    """The replay log's paraphrases (`replay/paraphrases.jsonl`), or None when absent."""
    path = Path(data_dir) / "replay" / "paraphrases.jsonl"
    return path if path.is_file() else None


def document_kind(document: Document) -> str:
    """A document's kind: its `kind` metadata, else its top-level folder (`code/...`:
    "code"), else "document"."""
    kind = document.metadata.get("kind")
    if kind:
        return str(kind)
    return document.id.split("/", 1)[0] if "/" in document.id else "document"


def example_question(questions: Sequence[Query], per_question: Mapping[str, "pd.DataFrame"],
                     metric: str = "Pass@20") -> Query | None:
    """A question to follow through the retrievers: the judged question whose best `metric`
    over the methods (`per_question`: method -> one row per question id) is lowest — one no
    retriever finds when there is one — then the one the methods miss most (lowest mean over
    them: when every question is found by some method, one that some miss, not one all find
    first), taking first the questions of the kind with the lowest mean of that best score,
    then the split's order. None when no question is judged."""
    best: dict[str, float] = {}
    total: dict[str, float] = {}
    for table in per_question.values():
        for qid, value in table[metric].items():
            best[qid] = max(best.get(qid, value), value)
            total[qid] = total.get(qid, 0.0) + value
    judged = [q for q in questions if q.id in best]
    kinds: dict[str, list[float]] = {}
    for q in judged:
        kinds.setdefault(q.kind, []).append(best[q.id])
    hardness = {kind: sum(v) / len(v) for kind, v in kinds.items()}
    order = {q.id: i for i, q in enumerate(judged)}
    return min(judged, key=lambda q: (best[q.id], total[q.id], hardness[q.kind], order[q.id]),
               default=None)


def _lacks(chunk: Chunk, context: str) -> bool:
    """Whether the context adds a word (3+ letters) the chunk's own text lacks."""
    own = {w.lower() for w in chunk.text.split()}
    return any(len(w) > 2 and w.isalpha() and w.lower() not in own for w in context.split())


def context_example(documents: Sequence[Document], questions: Sequence[Query],
                    judgments: Mapping[str, Sequence[set[str]]], contextualizer
                    ) -> tuple[Document, list[Chunk], Chunk] | None:
    """A chunk that needs its context: a golden chunk, not its document's first, of a
    judged question (contextual questions first, then in order) whose own text lacks a word
    the `contextualizer`'s context adds. Returns (document, its chunks, the chunk), or None.
    """
    by_id = {d.id: d for d in documents}
    ordered = sorted((q for q in questions if q.id in judgments),
                     key=lambda q: q.kind != "contextual")
    for question in ordered:
        golden = set().union(*judgments[question.id])
        for doc_id in dict.fromkeys(g.doc_id for g in question.golden):
            document = by_id.get(doc_id)
            chunks = chunk_document(document) if document else []
            for chunk in chunks[1:]:
                if chunk.id in golden and _lacks(chunk, contextualizer(document,
                                                                        [chunk])[0].context):
                    return document, chunks, chunk
    return None


def _safe_name(doc_id: str) -> str | None:
    """`doc_id` as a relative file path when it is a safe one, else None: no absolute path,
    no empty, `.` or `..` part, no control character, each part at most 255 bytes of UTF-8."""
    parts = doc_id.split("/")
    for part in parts:
        try:
            size = len(part.encode("utf-8"))
        except UnicodeEncodeError:  # a lone surrogate: not a name a file system takes
            return None
        if (part in ("", ".", "..") or size > 255
                or any(ord(c) < 32 or 127 <= ord(c) < 160 for c in part)):
            return None
    return doc_id


def corpus_names(documents: Sequence[Document]) -> dict[str, str]:
    """Each document id -> the relative path its text is written to by `raw_corpus`: the id
    itself when it is a safe relative path, else (an absolute path, `..`, a control
    character, or a name another document's file or folder already takes, e.g. `a` beside
    `a/b`, or differing from it only in case) `_ids/` + the first 16 hex digits of the id's
    sha256 (`_ids_/...` if a document's id took `_ids`)."""
    names: dict[str, str] = {}
    files: set[str] = set()  # casefolded: `A.md` and `a.md` are one file on macOS
    folders: set[str] = set()

    def free(name: str) -> bool:
        parts = name.casefold().split("/")
        return ("/".join(parts) not in files and "/".join(parts) not in folders
                and not any("/".join(parts[:i]) in files for i in range(1, len(parts))))

    for document in documents:
        name = _safe_name(document.id)
        if name is None or not free(name):
            digest = hashlib.sha256(document.id.encode("utf-8", "surrogatepass")).hexdigest()
            name = next(f"_ids{'_' * n}/{digest[:16]}" for n in range(len(files) + 2)
                        if free(f"_ids{'_' * n}/{digest[:16]}"))
        names[document.id] = name
        parts = name.casefold().split("/")
        files.add("/".join(parts))
        folders.update("/".join(parts[:i]) for i in range(1, len(parts)))
    return names


def _key(documents: Sequence[Document]) -> str:
    """sha256 of the documents' ids and texts, in order: the cache folder's name."""
    digest = hashlib.sha256(b"corpus_names 1\n")  # bump when the naming changes
    for document in documents:
        digest.update(json.dumps([document.id, document.text]).encode("utf-8") + b"\n")
    return digest.hexdigest()[:16]


def raw_corpus(data_dir: str | Path, documents: Sequence[Document]) -> Path:
    """The folder of raw text files that grep searches for `data_dir`: CRAG's fallback
    (`crag.GrepCorpus`) in notebook 06, the agent's grep/glob/read_file in 07.

    `data_dir/corpus` when the data is a `corpus/` folder (and no `documents.jsonl`, which
    `ragkit.datasets.load_shipped` would read instead). Otherwise `documents` (as loaded) are
    written as files — each id its relative path (`corpus_names`), its text the content — once
    into `$RAGKIT_HOME/cache/corpora/<sha256 of the documents>/`, and one line says where.
    Why: a `documents.jsonl` has no raw files, and grepping a `corpus/` that is not there
    finds nothing and says nothing. The folder is written beside and renamed in whole
    (`ragkit.atomic.replace_folder`) under a lock, so a run killed midway or two notebooks
    at once never leave a half-written one; a re-run with the same documents reuses it.

    What it is not: a copy of the user's folder (nothing is written into `data_dir`), nor a
    way out of the sandbox: the tools still stay inside the returned folder.
    """
    data_dir = Path(data_dir)
    if not (data_dir / "documents.jsonl").is_file() and (data_dir / "corpus").is_dir():
        return data_dir / "corpus"
    cache = corpora_folder()
    cache.mkdir(parents=True, exist_ok=True)
    target = cache / _key(documents)
    how = "reused"
    with FileLock(f"{target}.lock"):  # another notebook writing it: wait, then reuse it
        if not target.is_dir():
            how = "written"
            with replace_folder(target, lambda path: False, "corpus files") as staging:
                names = corpus_names(documents)
                for document in documents:
                    path = staging / names[document.id]
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_text(document.text, encoding="utf-8", errors="replace")
    source = (f"{data_dir.name}/documents.jsonl" if (data_dir / "documents.jsonl").is_file()
              else f"{data_dir.name} (no corpus/ folder)")
    print(f"Grep searches the {len(documents)} documents of {source} as files in {target} "
          f"({'written now' if how == 'written' else 'written by an earlier run'}).")
    return target
