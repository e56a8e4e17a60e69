"""The notebooks run on a data set they were not written for: a tiny folder in the shipped
layout with no Korean question, no replay log, one split and no cookbook set, run the way a
user runs it (`ragkit cookbook run -p data_dir=...`, in another process). Every notebook
completes; a section that needs what the data lacks says so in one line; the banner says the
prose is the shipped run's — and on the shipped data (the committed outputs) it is absent."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ragkit.agent import long_context
from ragkit.documents import Document
from ragkit.models import ragkit_home
from ragkit.notebook_data import BANNER, PARAMETERS_BANNER, data_banner, is_shipped, skip_unless
from ragkit.notebook_params import CHANGED_ENV, changed_parameters
from tiny_dataset import write_tiny_dataset

ROOT = Path(__file__).resolve().parent.parent
RAGKIT = str(Path(sys.executable).parent / "ragkit")
NOTEBOOKS = ["01", "02", "03", "04", "06", "07"]
BANNER_START = BANNER.split("{name}")[0]
SKIPS = {"01": ["No Korean questions in the dev split: section skipped."],
         "04": ["No replay log (replay/paraphrases.jsonl) in this data to replay through a "
                "semantic cache: section skipped.",
                "Anthropic's cookbook data set not found"],
         "02": ["Anthropic's cookbook data set not found"]}


def _texts(path: Path) -> tuple[str, list[str]]:
    """Every output text of an executed notebook, and its error outputs."""
    texts, errors = [], []
    for cell in json.loads(path.read_text())["cells"]:
        for o in cell.get("outputs", []):
            if o["output_type"] == "error":
                errors.append(f"{o['ename']}: {o['evalue']}")
            texts.append("".join(o.get("text", "")))
            for value in o.get("data", {}).values():
                texts.append("".join(value) if isinstance(value, list) else str(value))
    return "\n".join(texts), errors


def _home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    (home / "models").symlink_to(ragkit_home() / "models")
    return home


def _run(tmp_path: Path, data: Path, *params: str, numbers: list[str] = NOTEBOOKS,
         embedder: str = "minilm") -> subprocess.CompletedProcess:
    notebooks = [arg for number in numbers for arg in ("--notebook", number)]
    cookbook = ["-p", f"cookbook_dir={tmp_path / 'no-cookbook'}"] if "02" in numbers else []
    args = [RAGKIT, "cookbook", "run", "--out", str(tmp_path / "results"), *notebooks,
            "-p", f"data_dir={data}", "-p", f"embedder={embedder}", *cookbook, *params]
    env = {**os.environ, "RAGKIT_HOME": str(_home(tmp_path)), "RAGKIT_PROGRESS_SECONDS": "600"}
    return subprocess.run(args, capture_output=True, text=True, env=env, timeout=600, cwd=ROOT)


def test_every_notebook_completes_on_a_tiny_data_set_and_says_what_it_skipped(tmp_path):
    data = write_tiny_dataset(tmp_path / "tiny")
    done = _run(tmp_path, data, "-p", "split=dev", "-p", "tune_split=dev")
    assert done.returncode == 0, done.stderr[-3000:]
    for number in NOTEBOOKS:
        (path,) = (tmp_path / "results").glob(f"{number}_*.ipynb")
        text, errors = _texts(path)
        assert errors == [], f"{path.name}: {errors}"
        assert text.count(BANNER_START) == 1, f"{path.name}: no banner"
        # the parameters given that differ from the defaults, named once (not data_dir's)
        assert text.count("**Your parameters (") == 1, path.name
        assert "`split = 'dev'`" in text and "data_dir =" not in text, path.name
        assert "**Finding:**" in text, path.name
        for line in SKIPS.get(number, []):
            assert line in text, f"{path.name}: {line}"
    text, _ = _texts(next((tmp_path / "results").glob("02_*.ipynb")))
    assert "guides/offline.md#2: " in text  # the example chunk, derived from the data
    text, _ = _texts(next((tmp_path / "results").glob("07_*.ipynb")))
    assert "compared on: whole corpus" in text


def _table(results: Path, name: str) -> dict[str, dict[str, float]]:
    """A table recorded by the run (`results.json`): row -> column -> value."""
    for notebook in json.loads((results / "results.json").read_text())["notebooks"]:
        if name in notebook.get("tables", {}):
            table = notebook["tables"][name]
            return {row: dict(zip(table["columns"], values))
                    for row, values in zip(table["index"], table["data"])}
    raise AssertionError(f"no table {name}")


def test_06_and_07_grep_the_documents_of_a_documents_jsonl(tmp_path):
    """With `documents.jsonl` instead of `corpus/`, CRAG's grep fallback (06, 07) and the
    agent's tools (07) search the documents written as files, not a missing folder: 07's CRAG
    answers as many questions as plain RAG (as on the `corpus/` layout of the same data; with
    nothing to grep it answered none), and nothing is written into the user's folder."""
    data = write_tiny_dataset(tmp_path / "tiny", jsonl=True)
    done = _run(tmp_path, data, "-p", "split=dev", numbers=["06", "07"])
    assert done.returncode == 0, done.stderr[-3000:]
    # 06 runs CRAG on thresholds tuned on this tiny dev split (upper 0.4): nearly every
    # question is Correct and grep is not asked; 07, on the shipped thresholds, shows it
    crag_06 = _table(tmp_path / "results", "crag_self_rag")
    assert crag_06["plain RAG"]["accuracy %"] == 25.0
    crag_07 = _table(tmp_path / "results", "rag_vs_long_context")
    assert crag_07["CRAG (offline evaluator)"]["accuracy %"] == 40.0
    assert crag_07["fixed RAG (top 5)"]["accuracy %"] == 40.0
    corpora = tmp_path / "home" / "cache" / "corpora"
    (folder,) = [p for p in corpora.iterdir() if p.is_dir()]
    line = (f"Grep searches the 12 documents of tiny/documents.jsonl as files in {folder} "
            f"(written ")
    for number in ("06", "07"):
        (path,) = (tmp_path / "results").glob(f"{number}_*.ipynb")
        text, errors = _texts(path)
        assert errors == [], f"{path.name}: {errors}"
        assert line in text, path.name
    assert len(list(folder.rglob("*.*"))) == 12
    assert sorted(p.name for p in data.iterdir()) == ["documents.jsonl", "golden"]


def test_06_and_07_on_one_question_say_one_question(tmp_path):
    """A teacher's `every` that leaves one question: the counts read "1 dev question", and
    07's cached cost is not called a read from the cache (one question only writes it)."""
    data = write_tiny_dataset(tmp_path / "tiny")
    done = _run(tmp_path, data, "-p", "split=dev", "-p", "every=100", numbers=["06", "07"])
    assert done.returncode == 0, done.stderr[-3000:]
    text, errors = _texts(next((tmp_path / "results").glob("07_*.ipynb")))
    assert errors == []
    assert "; 1 dev question\n" in text
    assert "it costs" in text and "over 1 question," in text
    assert "1 questions" not in text and "read from the cache" not in text
    text, errors = _texts(next((tmp_path / "results").glob("06_*.ipynb")))
    assert errors == []
    assert "1 dev question (one in 100) for the comparison" in text
    assert "on 1 dev question." in text and "1 dev questions" not in text


def test_06_on_a_dev_split_of_unanswerable_questions_skips_the_tuning(tmp_path):
    """No relevant passage among the dev split's (every dev question unanswerable): CRAG's
    cuts cannot be tuned, and the whole notebook failed on that one cell."""
    data = write_tiny_dataset(tmp_path / "tiny", split="test")
    golden = data / "golden" / "questions.jsonl"
    rows = [json.loads(line) for line in golden.read_text().splitlines()]
    for row in rows[:3]:
        row.update(split="dev", golden=[])
    golden.write_text("".join(json.dumps(row) + "\n" for row in rows))
    done = _run(tmp_path, data, "-p", "split=test", numbers=["06"])
    assert done.returncode == 0, done.stderr[-3000:]
    text, errors = _texts(next((tmp_path / "results").glob("06_*.ipynb")))
    assert errors == []
    assert ("The dev split's 15 top-5 passages are not both relevant and irrelevant, so no "
            "cut can be tuned (in use: 0.75, 0.25): tuning skipped.") in text


def test_06_with_one_dev_question_says_one_dev_question(tmp_path):
    """A data set with one question in its dev split: "1 dev questions for tuning"."""
    data = write_tiny_dataset(tmp_path / "tiny", split="test")
    golden = data / "golden" / "questions.jsonl"
    rows = [json.loads(line) for line in golden.read_text().splitlines()]
    rows[0]["split"] = "dev"
    golden.write_text("".join(json.dumps(row) + "\n" for row in rows))
    done = _run(tmp_path, data, "-p", "split=test", numbers=["06"])
    assert done.returncode == 0, done.stderr[-3000:]
    text, errors = _texts(next((tmp_path / "results").glob("06_*.ipynb")))
    assert errors == []
    assert "; 1 dev question for tuning; " in text and "1 dev questions" not in text

def _hostile_rules(root: Path) -> Path:
    """Eight documents of forty near-identical sentences ("The refund rule number 5 says the
    refund window lasts 5 days .") whose ids, titles and headings carry markup, pipes, bidi
    overrides and escape sequences; questions whose golden span the answerer never quotes."""
    mark = ("<script>alert(1)</script>[x](javascript:alert(3)) $$x^2$$ `tick` a|b|c "
            "\u202eRTL\u202c \x1b[31mRED\x1b[0m ")
    docs, questions = [], []
    for i, topic in enumerate(["refund", "shipping", "warranty", "privacy", "travel", "gate",
                               "lamp", "valve"]):
        doc_id = f"{mark}doc|{i}/{topic}.md" if i % 2 == 0 else f"d{i}-{topic}.md"
        text = (f"# {mark} {topic} heading\n\n" + " ".join(
            f"The {topic} rule number {k} says the {topic} window lasts {k + i} days ."
            for k in range(12))
            + f"\n\n## {mark} second\n\n{mark * 3} {topic} details.\n")
        docs.append({"id": doc_id, "title": f"{mark} title {topic}", "text": text})
        questions += [{"id": f"{mark}q{i}-{j}", "kind": "lexical", "split": "test",
                       "question": f"{mark} How many days does the {topic} rule number {j + 5} "
                                   f"give?", "answer": f"{j + 5 + i} days",
                       "golden": [{"doc_id": doc_id,
                                   "span": f"{topic} window lasts {j + 5 + i} days"}]}
                      for j in range(2)]
    (root / "golden").mkdir(parents=True)
    (root / "documents.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    (root / "golden" / "en.jsonl").write_text("".join(json.dumps(q) + "\n" for q in questions))
    return root


def test_04_skips_the_decline_curve_when_nothing_is_quoted_or_declined(tmp_path):
    """The offline answerer quoting no golden span and declining nothing at any threshold
    stopped notebook 04 on UnreadableFigure (a curve flat at 0); now one line says so."""
    data = _hostile_rules(tmp_path / "rules")
    done = _run(tmp_path, data, "-p", f"cookbook_dir={tmp_path / 'no-cookbook'}",
                numbers=["04"])
    assert done.returncode == 0, done.stderr[-3000:]
    text, errors = _texts(next((tmp_path / "results").glob("04_*.ipynb")))
    assert errors == []
    assert ("No golden span quoted and no question declined at any threshold: the curve "
            "would lie flat at 0") in text


def test_a_split_the_data_lacks_is_one_line_naming_the_splits_it_has(tmp_path):
    """Refused before any kernel starts, in one line naming the notebooks that read it: each
    notebook stopped on its own cell with the same error (six lines, a kernel each)."""
    data = write_tiny_dataset(tmp_path / "tiny")
    done = _run(tmp_path, data, numbers=["01", "03", "07"])  # split="test": tiny has dev only
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "ragkit: error: tiny: no queries in split 'test' (splits: ['dev']), asked for by "
        "01_retrieval_basics.ipynb (split), 03_hybrid_fusion.ipynb (split), "
        "07_rag_vs_long_context.ipynb (split)"]
    assert not (tmp_path / "results").exists()
    (tmp_path / "again").mkdir()
    tuned = _run(tmp_path / "again", data, "-p", "split=dev", "-p", "tune_split=train",
                 numbers=["03", "06"])  # 06 tuned CRAG on "dev" whatever it was given
    assert tuned.stderr.splitlines() == [
        "ragkit: error: tiny: no queries in split 'train' (splits: ['dev']), asked for by "
        "03_hybrid_fusion.ipynb (tune_split), 06_crag_self_rag.ipynb (tune_split)"]


@pytest.mark.parametrize("number", NOTEBOOKS)
def test_the_committed_run_on_the_shipped_data_shows_no_banner(number):
    (path,) = (ROOT / "notebooks").glob(f"{number}_*.ipynb")
    text, _ = _texts(path)
    assert "data_banner(data_dir)" in path.read_text()
    assert BANNER_START not in text


def test_the_banner_is_for_other_data_only(tmp_path, monkeypatch):
    shown: list[str] = []
    monkeypatch.setattr("ragkit.notebook_data._show", shown.append)
    assert is_shipped(ROOT / "notebooks" / ".." / "data")
    data_banner(ROOT / "data")
    assert shown == []
    data_banner(write_tiny_dataset(tmp_path / "mine"))
    assert shown == [BANNER.format(name="`mine`")]
    assert skip_unless([], "No Korean questions in the test split") is False
    assert shown[-1] == "*No Korean questions in the test split: section skipped.*"
    assert skip_unless([1], "unused") is True and len(shown) == 2
    # a run that changed a parameter (`ragkit cookbook run -p tokenizer=words`) says so too
    monkeypatch.setenv(CHANGED_ENV, '{"tokenizer": "words", "every": 2}')
    data_banner(ROOT / "data")
    assert shown[-1] == PARAMETERS_BANNER.format(given="`tokenizer = 'words'`, `every = 2`")


def test_a_data_dir_that_is_no_folder_is_refused_naming_the_parameter(tmp_path):
    """`ragkit cookbook run --notebook 01 -p data_dir=/my/data` failed a cell later on
    "/my/data/corpus: not a folder", naming no parameter."""
    from ragkit.documents import RagkitError
    (tmp_path / "notes.txt").write_text("mine\n")
    for value, why in ((tmp_path / "gone", "no such folder"),
                       (tmp_path / "notes.txt", "a file, not a folder")):
        with pytest.raises(RagkitError) as caught:
            data_banner(str(value))
        assert str(caught.value) == f"parameter data_dir = '{value}': {why}"


def test_only_parameters_that_change_what_is_computed_count_as_changed():
    notebook = ROOT / "notebooks" / "01_retrieval_basics.ipynb"
    assert changed_parameters(notebook, {"data_dir": "/elsewhere", "tokenizer": "words",
                                         "k": 20, "split": "dev"}) == {"tokenizer": "words",
                                                                       "split": "dev"}
    # notebook 05 has no data banner: another code base is what its text does not describe
    agentic = ROOT / "notebooks" / "05_agentic_search.ipynb"
    assert changed_parameters(agentic, {"code_root": "/elsewhere/code"}) == {
        "code_root": "/elsewhere/code"}


class _Counter:
    """A token counter: one token per character of the prompt's text blocks."""

    def count_tokens(self, model, system, messages):
        return sum(len(block["text"]) for block in messages[0]["content"])


def test_the_long_context_part_leaves_out_the_largest_folders_until_the_rest_fits():
    documents = [Document("big/a.md", "x" * 6000), Document("mid/b.md", "y" * 300),
                 Document("small/c.md", "z" * 100), Document("top.md", "w" * 50)]
    assert long_context.folder_parts(documents) == {
        "big/": ["big/"], "mid/": ["mid/"], "small/": ["small/"], "top.md": ["top.md"]}
    part = long_context.fitting_part(documents, _Counter(), room=0)
    assert part[0] == "whole corpus"  # Haiku 4.5's window holds all of it
    window = long_context.price(long_context.DEFAULT_MODEL).context_window
    # a limit of 2,000 tokens: the corpus less big/ fits, big/ alone does not
    assert long_context.fitting_part(documents, _Counter(), room=window - 2000) == (
        "everything but big/", ["mid/", "small/", "top.md"])
    with pytest.raises(Exception, match="no top-level folder of the corpus fits"):
        long_context.fitting_part(documents, _Counter(), room=window - 10)


def test_the_report_names_a_run_on_other_data_by_its_folder_and_explains_nothing(tmp_path):
    from ragkit.report import ladder_rows, overstatement
    table = {"index": ["baseline embeddings", "+ contextual BM25 (hybrid)"], "caption": "",
             "columns": ["Fail@20", "reduction %", "article Fail@20", "article reduction %"],
             "data": [[20.0, 0.0, 5.7, 0.0], [8.0, 60.0, 2.9, 49.1]]}
    nb = {"name": "02_contextual_retrieval.ipynb", "tables": {"ladder_shipped": table},
          "parameters": {"data_dir": str(tmp_path / "sklearn")}}
    document = {"notebooks": [nb]}
    assert ladder_rows(document)[0] == ["02 · sklearn", "Anthropic's article"]
    assert overstatement(document) == ""
    nb["parameters"]["data_dir"] = "../data"  # relative to notebooks/, as the default
    assert ladder_rows(document)[0] == ["02 · shipped", "Anthropic's article"]
    assert overstatement(document).startswith("The shipped data's column overstates")


def test_the_example_question_is_one_no_retriever_finds_else_one_most_of_them_miss():
    """Notebook 01 follows one question through the retrievers; on data where every question
    is found by some retriever it once showed one that all three rank first."""
    import pandas as pd
    from ragkit.documents import Query
    from ragkit.notebook_data import example_question
    questions = [Query(f"q{i}", f"question {i}", kind=k) for i, k in
                 enumerate(["lexical", "lexical", "paraphrase", "paraphrase"])]

    def table(values):
        return pd.DataFrame({"Pass@20": values}, index=[q.id for q in questions])
    found_by_some = {"BM25": table([100.0, 100.0, 100.0, 0.0]),
                     "dense": table([100.0, 0.0, 100.0, 100.0]),
                     "hybrid": table([100.0, 0.0, 100.0, 100.0])}
    assert example_question(questions, found_by_some).id == "q1"  # missed by two of three
    none_finds = {**found_by_some, "BM25": table([100.0, 100.0, 100.0, 0.0]),
                  "dense": table([100.0, 0.0, 100.0, 0.0]),
                  "hybrid": table([100.0, 0.0, 100.0, 0.0])}
    assert example_question(questions, none_finds).id == "q3"
    assert example_question(questions[:1], {"BM25": table([100.0] * 4)}).id == "q0"


def test_a_question_in_hangul_without_a_lang_field_counts_as_korean():
    """A question file written by hand seldom says `lang`: notebook 01 printed "No Korean
    questions in the test split" beside a table that counted one."""
    from ragkit.documents import Query
    from ragkit.notebook_data import korean_questions
    questions = [Query("h5", "비밀번호는 몇 자 이상이어야 합니까?"),
                 Query("e1", "How long is a password?"),
                 Query("t1", "Translate 비밀번호", metadata={"lang": "en"}),
                 Query("k1", "몇 자?", metadata={"lang": "ko"}),
                 Query("k2", "몇 자?", metadata={"lang": "ko"})]
    judged = {"h5": 1, "e1": 1, "t1": 1, "k1": 1}
    assert [q.id for q in korean_questions(questions, judged)] == ["h5", "k1"]


def test_parameters_edited_in_jupyterlab_show_the_banner_too(tmp_path):
    """The banner showed only under `ragkit cookbook run -p`: a student who set
    `tokenizer = "words"` in JupyterLab's parameters cell read prose that contradicted the
    tables. A kernel JupyterLab starts for a notebook knows its path (JPY_SESSION_NAME); its
    defaults are in its metadata. Here the first cells of notebook 01, edited, run in a
    kernel started as JupyterLab starts it."""
    import nbformat
    from nbclient import NotebookClient
    path = ROOT / "notebooks" / "01_retrieval_basics.ipynb"
    nb = nbformat.read(path, 4)
    assert nb.metadata["ragkit"]["defaults"]["tokenizer"] == "auto"
    cells = nb.cells[:3]
    assert "tokenizer =" in cells[1].source and "data_banner(data_dir)" in cells[2].source
    cells[1].source = cells[1].source.replace('tokenizer = "auto"', 'tokenizer = "words"')
    env = {k: v for k, v in os.environ.items() if k != CHANGED_ENV}
    shown = []
    for session in (str(path), None):  # in JupyterLab; elsewhere (papermill, nbval): nothing
        run = nbformat.v4.new_notebook(cells=[nbformat.from_dict(dict(c)) for c in cells],
                                       metadata=nb.metadata)
        NotebookClient(run, timeout=120, kernel_name="python3",
                       resources={"metadata": {"path": str(path.parent)}}).execute(
            env={**env, **({"JPY_SESSION_NAME": session} if session else {})})
        shown.append([o["data"]["text/markdown"] for o in run.cells[2].outputs
                      if "text/markdown" in o.get("data", {})])
    assert shown == [[PARAMETERS_BANNER.format(given="`tokenizer = 'words'`")], []]


def test_parameters_given_to_plain_papermill_show_the_banner_too(tmp_path):
    """`papermill 01_retrieval_basics.ipynb out.ipynb -p tokenizer words` showed no banner
    above prose quoting the default run's numbers: the kernel knew nothing of the cell
    papermill injected. It reads it from the kernel's input history now. A value equal to the
    default, or no `-p` at all, is no change."""
    import nbformat
    import papermill
    path = ROOT / "notebooks" / "01_retrieval_basics.ipynb"
    nb = nbformat.read(path, 4)
    nb.cells = nb.cells[:3]
    assert "parameters" in nb.cells[1].metadata.get("tags", [])
    source = tmp_path / "01.ipynb"
    nbformat.write(nb, source)
    env = {k: v for k, v in os.environ.items() if k not in (CHANGED_ENV, "JPY_SESSION_NAME")}
    shown = []
    for given in ({"tokenizer": "words", "k": 20}, {"tokenizer": "auto"}, {}):
        out = tmp_path / "out.ipynb"
        saved = dict(os.environ)
        os.environ.clear()
        os.environ.update(env)
        try:
            papermill.execute_notebook(str(source), str(out), parameters=given,
                                       kernel_name="python3", cwd=str(path.parent),
                                       progress_bar=False)
        finally:
            os.environ.clear()
            os.environ.update(saved)
        (cell,) = [c for c in nbformat.read(out, 4).cells if "data_banner(" in c.source]
        shown.append([o["data"]["text/markdown"] for o in cell.outputs
                      if "text/markdown" in o.get("data", {})])
    # k = 20 is notebook 01's default: only the tokenizer changed
    assert shown == [[PARAMETERS_BANNER.format(given="`tokenizer = 'words'`")], [], []]


def test_a_users_own_cell_opening_with_papermills_comment_is_no_injected_one():
    """A parameters cell of the user's own whose first line is `# Parameters` was taken for
    papermill's: every default counted as changed (in JupyterLab, under nbval)."""
    from ragkit.papermill_params import injected
    own = '# Parameters\nk = 20\ntokenizer = "auto"\n'
    assert injected({"In": ["", own, "data_banner(data_dir)"], "k": 20,
                     "tokenizer": "auto"}) == {}
    given = '# Parameters\ntokenizer = "words"\nk = 20\n'
    assert injected({"In": ["", own, given], "k": 20, "tokenizer": "words"}) == {
        "tokenizer": "words"}


def test_05_run_as_jupyterlab_runs_it_shows_no_parameters_banner_on_its_defaults():
    """05's first code cell replaced `code_root` and `corpus_root` by their resolved paths
    before `parameters_banner()` compared them with the defaults: a default run in
    JupyterLab showed "Your parameters (code_root = PosixPath(...), ...)". Its first cells,
    run in a kernel started as JupyterLab starts one (no papermill), twice as a student
    re-running a cell would, show no banner."""
    import nbformat
    from nbclient import NotebookClient
    path = ROOT / "notebooks" / "05_agentic_search.ipynb"
    nb = nbformat.read(path, 4)
    assert "parameters" in nb.cells[1].metadata.tags
    assert "parameters_banner()" in nb.cells[2].source
    run = nbformat.v4.new_notebook(cells=[nbformat.from_dict(dict(c)) for c in nb.cells[:3]]
                                   + [nbformat.from_dict(dict(nb.cells[2]))],
                                   metadata=nb.metadata)
    env = {k: v for k, v in os.environ.items() if k != CHANGED_ENV}
    NotebookClient(run, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute(
        env={**env, "JPY_SESSION_NAME": str(path)})
    shown = [o["data"]["text/markdown"] for cell in run.cells[2:] for o in cell.outputs
             if "text/markdown" in o.get("data", {})]
    assert shown == []
    assert [o.get("name") for o in run.cells[2].outputs] == ["stdout"]


def test_each_notebook_records_the_defaults_of_its_parameters_cell():
    """What JupyterLab's banner compares with; `ragkit cookbook refresh` writes it."""
    import nbformat
    from ragkit.notebook_params import declared_parameters
    for path in sorted((ROOT / "notebooks").glob("0*.ipynb")):
        recorded = nbformat.read(path, 4).metadata.get("ragkit", {}).get("defaults")
        assert recorded == declared_parameters(path), path.name


def test_long_steps_show_progress_in_jupyterlab_only(monkeypatch):
    """01's index cell ran 250 s showing only [*] in JupyterLab. Kernels a Jupyter server
    starts for a notebook show bars; papermill's and nbval's (the committed outputs) do not."""
    import re
    from ragkit.cookbook import live
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    assert live() is False
    monkeypatch.setenv("JPY_SESSION_NAME", str(ROOT / "notebooks" / "01_retrieval_basics.ipynb"))
    assert live() is True
    for path in sorted((ROOT / "notebooks").glob("0*.ipynb")):
        text = path.read_text()
        assert "progress=False" not in text, path.name
        assert len(re.findall(r"Pipeline\.build\(|build_indexes\(", text)) <= text.count(
            "progress=live()"), path.name


def test_notebook_05s_own_banner_call_reads_its_namespace(monkeypatch):
    """05 calls parameters_banner() itself (it has no data banner): with no namespace given
    the JupyterLab comparison saw nothing, and an edited max_turns showed no banner."""
    shown: list[str] = []
    monkeypatch.setattr("ragkit.notebook_data._show", shown.append)
    monkeypatch.delenv(CHANGED_ENV, raising=False)
    path = ROOT / "notebooks" / "05_agentic_search.ipynb"
    monkeypatch.setenv("JPY_SESSION_NAME", str(path))
    import nbformat
    defaults = nbformat.read(path, 4).metadata["ragkit"]["defaults"]
    namespace = {**defaults, "max_turns": defaults["max_turns"] + 1}
    exec("from ragkit.cookbook import parameters_banner\nparameters_banner()", namespace)
    assert shown == [PARAMETERS_BANNER.format(given=f"`max_turns = {defaults['max_turns'] + 1}`")]


def test_a_notebook_run_from_a_jupyterlab_kernel_is_not_taken_for_one(tmp_path, monkeypatch):
    """`ragkit cookbook run` from a JupyterLab kernel passed JPY_SESSION_NAME on to papermill's
    kernel: live() was true there and bars went into the recorded notebook."""
    import nbformat
    from ragkit.notebook_runner import execute
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "from ragkit.cookbook import live\nprint('live', live())")])
    nbformat.write(nb, tmp_path / "probe.ipynb")
    monkeypatch.setenv("JPY_SESSION_NAME", str(ROOT / "notebooks" / "01_retrieval_basics.ipynb"))
    result = execute(tmp_path / "probe.ipynb", tmp_path / "out" / "probe.ipynb")
    assert result["error"] == ""
    ran = nbformat.read(tmp_path / "out" / "probe.ipynb", 4)
    assert ran.cells[0].outputs[0]["text"] == "live False\n"
    assert os.environ["JPY_SESSION_NAME"].endswith("01_retrieval_basics.ipynb")  # restored


def test_01_and_06_print_a_jsonl_files_escape_sequences_escaped(tmp_path):
    """A documents.jsonl or golden file keeps its control characters (a folder's files are
    cleaned); 01 and 06 printed a question and passages holding "\\x1b[31m" and U+202E as
    they were, and JupyterLab coloured and turned around the lines that followed."""
    data = write_tiny_dataset(tmp_path / "tiny", jsonl=True)
    for name in ("documents.jsonl", "golden/questions.jsonl"):
        rows = [json.loads(line) for line in (data / name).read_text().splitlines()]
        for row in rows:
            key = "text" if "text" in row else "question"
            row[key] = "\x1b[31m\u202e" + row[key].replace(". ", ". \x1b[8m", 3)
        (data / name).write_text("".join(json.dumps(r) + "\n" for r in rows))
    done = _run(tmp_path, data, "-p", "split=dev", numbers=["01", "06"])
    assert done.returncode == 0, done.stderr[-3000:]
    for number in ("01", "06"):
        (path,) = (tmp_path / "results").glob(f"{number}_*.ipynb")
        printed = "".join("".join(o.get("text", "")) for cell in
                          json.loads(path.read_text())["cells"]
                          for o in cell.get("outputs", []) if o["output_type"] == "stream")
        assert "\\x1b[31m\\u202e" in printed, path.name  # the question, shown escaped
        assert "\x1b" not in printed and "\u202e" not in printed, path.name


@pytest.mark.parametrize("name", ["my`data", "`lead", "two``ticks`", "tab\there", " spaced "])
def test_the_banner_shows_a_folder_name_with_backticks_whole_in_one_code_span(
        tmp_path, monkeypatch, name):
    """A folder named my`data closed the banner's `…` early: JupyterLab showed "my" as code
    and "data" (and the rest of the sentence up to the next backtick) as Markdown."""
    from markdown_it import MarkdownIt
    shown: list[str] = []
    monkeypatch.setattr("ragkit.notebook_data._show", shown.append)
    data_banner(write_tiny_dataset(tmp_path / name))
    html = MarkdownIt("commonmark").render(shown[-1])
    shown_name = name.replace("\t", "\\t")
    assert f"<code>{shown_name}</code>" in html.replace("&quot;", '"')
    assert html.count("<code>") == 2  # the name and `data/`
    monkeypatch.setenv(CHANGED_ENV, json.dumps({"question": "what is `k`?"}))
    data_banner(ROOT / "data")
    html = MarkdownIt("commonmark").render(shown[-1])
    assert "<code>question = 'what is `k`?'</code>" in html.replace("&#x27;", "'")


def test_08_names_the_sample_by_what_it_is_in_its_titles_and_captions(tmp_path, monkeypatch):
    """08's tables, figures and the report's headline named the sample by its folder,
    "mixed" ("Fail@20 per rung, mixed (42 answerable questions)"), which no text explains.
    Captions and titles name the sample as what it is, and any other folder by its name."""
    import ast

    import nbformat
    from ragkit import folder_label
    from ragkit.sample_collection import SAMPLE
    assert folder_label(SAMPLE) == "the PDF, HTML and Word sample"
    monkeypatch.chdir(ROOT / "notebooks")
    assert folder_label("../build/sample-formats/mixed") == "the PDF, HTML and Word sample"
    (tmp_path / "docs").mkdir()
    assert folder_label(tmp_path / "docs") == "docs"
    monkeypatch.chdir(tmp_path / "docs")
    assert folder_label(".") == "docs"
    nb = nbformat.read(ROOT / "notebooks" / "08_your_own_documents.ipynb", 4)
    named = [ast.unparse(keyword.value) for cell in nb.cells if cell.cell_type == "code"
             for node in ast.walk(ast.parse(cell.source)) if isinstance(node, ast.Call)
             for keyword in node.keywords if keyword.arg in ("caption", "title")
             and isinstance(keyword.value, ast.JoinedStr)]  # the ones formatted per run
    assert len(named) == 4 and all("{label}" in text for text in named), named
    assert not any("folder.name" in text for text in named)
