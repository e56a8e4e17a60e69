"""What the notebooks' prose says agrees with what they show: every number in a Markdown cell
is a constant of the text (listed below, per notebook) or shown by the notebook's outputs; no
timing is typed into prose; Fail@20 has one definition; sources are named, not numbered."""
import re
from pathlib import Path

import pytest

from notebook_prose import (load, markdown_cells, output_texts, timings, unsupported,
                            unsupported_in_section, without_optional_data)

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))

# Constants of each notebook's text: definitions, parameters, published figures — the
# numbers that are not results. Each is removed (as written) before the prose is checked.
ARTICLE = ["5.7 %", "3.7 %", "2.9 %", "1.9 %", "50–100 token", "$1.02", "about $1 per million"]
COMMON = ["k = 60", "0.6 / 0.4", "0.6/0.4", "dense 0.6", "BM25 0.4", "top 150", "top 5",
          "top k", "one token per 4", "4 UTF-8 bytes", "4,096 tokens", "8K-token", "k = 5",
          "k = 20", "Pass@5/10/20", "1 − α"]
CONSTANTS = {
    "01": ["k = 5", "top 3", "a hundred"],
    "02": [*ARTICLE, "248 questions", "737 chunks", "9 code bases", "Pass@20 95.0",
           "Pass@20 96.3", "8k-token", "800-token", "50-token", "100-token", "2,048 for",
           "nine calls", "four times", "67 %"],
    "03": ["0 to 1", "from 1 to 200", "1000 times", "256, 512 and 1024", "10–20 %",
           "12.5 % (the default's 64 of 512)", "12.5 %", "20 %", "nine",
           "five 1024-token", "five 256-token", "1024", "512", "256", "Σ 1 / (k + rank)",
           "nearest 0.5", "nearest 60", "tenth or two", "rrf_k=60", "0.8 / 0.2", "95 %"],
    "04": [*ARTICLE, "20 … 150", "3 … 20", "737 chunks", "+4.8 Pass@5", "p50 of the step ≤ 50 ms", "512-token", "30–60 %", "0.3, measured", "5 % of queries",
           "windows of 20, moved by 10", "95 % interval", "95 %", "8K", "(0.3)",
           "248 questions", "(≥ 95)", "Pass@5 ≥ 89", "91.2 / 96.3"],
    "05": ["4–8 sentences", "1.0**", "4,096 tokens", "1.25×", "turns 1…*n*−1", "a tenth"],
    "06": ["Yan et al. 2024", "Asai et al. 2023", "1–5", "w_rel = 1", "w_sup = 1",
           "w_use = 0.5", "95 %", "60 %", "80 %", "top 5", "three sentences", "4 bytes"],
    "07": ["200K", "200,000-token", "2,048 tokens", "5 minutes", "5-minute", "1.25×",
           "\"up to 90 %\"", "4 bytes", "top-5", "a tenth"],
}


def _number(path: Path) -> str:
    return path.name[:2]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_every_number_in_the_prose_is_a_constant_or_shown_by_an_output(path):
    constants = COMMON + CONSTANTS.get(_number(path), [])
    assert unsupported(load(path), constants) == []


OPTIONAL = [p for p in NOTEBOOKS if "cookbook_dir" in p.read_text()]


@pytest.mark.parametrize("path", OPTIONAL, ids=[p.stem for p in OPTIONAL])
def test_the_prose_holds_in_a_fresh_clone_without_the_cookbook_data_set(path):
    """Anthropic's cookbook set is not shipped: in a fresh clone its cells print only that
    they skipped, so the Markdown must not state numbers that only those cells show (the
    cell prints them itself, beside its tables)."""
    constants = COMMON + CONSTANTS.get(_number(path), [])
    assert unsupported(without_optional_data(load(path)), constants) == []


# Numbers a section's text takes from another section, on purpose: a total, a figure the
# section compares with, an example sentence.
CROSS_SECTION = {
    "03": ["about 160 questions", "against 0.781"],
    "04": ["`rerank_candidates` (150)", "of 159 questions", "of 173 questions", "grew 8 %"],
}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_every_number_in_a_section_is_shown_by_that_section(path):
    """A number the notebook shows somewhere is not enough: "p = 0.0008" passed the test
    above while the comparison it described printed p = 0.0010."""
    constants = COMMON + CONSTANTS.get(_number(path), []) + CROSS_SECTION.get(_number(path), [])
    assert unsupported_in_section(load(path), constants) == []


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_prose_types_no_timings(path):
    """Times vary from run to run: the cell that measures them prints the sentence."""
    assert timings(load(path), COMMON + CONSTANTS.get(_number(path), [])) == []


FAIL20 = re.compile(r"Fail@20\s*=\s*\**\s*(\S+\s*[−-]\s*[\w@]+)")


def test_fail20_means_100_minus_pass20_wherever_it_is_defined():
    """The article's failure rate, as ragkit computes it (`ragkit.evaluate.summarize`)."""
    texts = [(p.name, t) for p in NOTEBOOKS for t in markdown_cells(load(p))]
    texts += [(p.name, t) for p in NOTEBOOKS for t in output_texts(load(p))]
    texts += [(str(p.relative_to(ROOT)), p.read_text()) for p in
              [ROOT / "README.md", ROOT / "notebooks" / "README.md", *sorted(
                  (ROOT / "ragkit").rglob("*.py"))]]
    definitions = {(name, m.group(1).strip()) for name, text in texts
                   for m in FAIL20.finditer(text)}
    assert definitions and {d for _, d in definitions} == {"100 − Pass@20"}, definitions


def test_fail20_is_100_minus_pass20_in_the_ladder():
    import pandas as pd

    from ragkit.evaluate import summarize
    table = pd.DataFrame({"Pass@20": [100.0, 50.0, 0.0], "R@20": [1.0, 0.25, 0.0]})
    summary = summarize(table)
    assert summary["Fail@20"] == pytest.approx(50.0)   # 100 − mean Pass@20, not 1 − R@20


SEED = re.compile(r"seeds?[ -]?00\d", re.I)


def test_sources_are_named_not_numbered():
    """"seed 002" means nothing to a reader: name the source (Anthropic's Contextual
    Retrieval article, Anthropic's tool-use docs, the agentic-RAG notes)."""
    files = [*NOTEBOOKS, ROOT / "README.md", ROOT / "notebooks" / "README.md",
             *sorted((ROOT / "ragkit").rglob("*.py"))]
    found = [f"{p.relative_to(ROOT)}: {m.group(0)}" for p in files
             for m in SEED.finditer(p.read_text())]
    assert found == []


def test_a_notebook_citing_the_best_practice_notes_says_whose_they_are():
    """"the 2026 RAG best-practice notes" is no source a student can look up: a notebook that
    cites them names them (premai.io's production-RAG guide), as the README does."""
    citing = [p.name for p in NOTEBOOKS
              if "best-practice notes" in "".join(markdown_cells(load(p)))]
    assert citing and [name for name in citing if "premai.io's production-RAG guide" not in
                       "".join(markdown_cells(load(ROOT / "notebooks" / name)))] == []


def test_no_notebook_cites_notes_a_student_cannot_look_up():
    """Notebooks 05 and 06 cited "the agentic-RAG notes" (their table, their diagrams), a
    source named nowhere a student could find it; the notebooks say it in their own words."""
    assert [p.name for p in NOTEBOOKS
            if "agentic-RAG notes" in "".join(markdown_cells(load(p)))] == []


WARNING_LOCATION = re.compile(r"^\S+:\d+: \w*Warning: ", re.M)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_no_output_shows_a_python_warnings_source_line(path):
    """A warning a reader should see is printed as a sentence by its cell: Python's own format
    shows the kernel's temporary file name (`/tmp/ipykernel_…/….py:1:`) and the line of code,
    in a red box JupyterLab draws like an error."""
    assert [m.group(0) for t in output_texts(load(path)) for m in
            WARNING_LOCATION.finditer(t)] == []


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_no_table_shows_nan_for_a_value_that_does_not_apply(path):
    """An HTML page has no pages and a review sheet's empty cell is empty: a table shows a
    blank there, as a spreadsheet does, not pandas' `NaN`."""
    cells = [t for t in output_texts(load(path)) if "<table" in t]
    assert sum(t.count("<td>NaN</td>") for t in cells) == 0


def test_p_values_are_shown_to_three_decimals():
    """Notebook 08's configuration table: a p-value of 0.04 rounded like a Pass@k (one
    decimal) would read 0.0, as if certain."""
    import pandas as pd

    from ragkit import round_metrics
    shown = round_metrics(pd.DataFrame({"Pass@5": [91.54], "p": [0.0437], "Holm p": [0.1309]}))
    assert shown.iloc[0].tolist() == [91.5, 0.044, 0.131]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_no_markdown_a_reader_sees_has_a_dollar_sign_a_formula_reader_pairs(path):
    """JupyterLab, nbconvert and GitHub read the text between two "$" as a formula: "($0.01),
    12.3 calls … ($0.116" came out as italic run-together letters, the signs gone — and so
    did `\\$` in JupyterLab 4. Markdown cells write `ragkit.money.DOLLAR`; Markdown
    outputs go through `ragkit.cookbook.prose` (findings too)."""
    nb = load(path)
    shown = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown"]
    shown += ["".join(o["data"]["text/markdown"]) for c in nb["cells"]
              for o in c.get("outputs", []) if "text/markdown" in o.get("data", {})]
    assert [m.group(0) for text in shown for m in re.finditer(r".{0,30}\$.{0,30}", text)] == []


def test_prose_keeps_a_dollar_sign_a_dollar_sign():
    from ragkit.cookbook import prose
    from ragkit.money import DOLLAR, dollars_kept
    assert dollars_kept("from $0.01 to $0.116, \\$5") == \
        f"from {DOLLAR}0.01 to {DOLLAR}0.116, {DOLLAR}5"
    assert prose("costs $3").data == f"costs {DOLLAR}3"
    assert dollars_kept("`question = 'over $100?'` costs $3") == \
        f"`question = 'over $100?'` costs {DOLLAR}3"  # a code span shows HTML as typed
    # CommonMark code spans: a backtick run closed by one of the same length
    assert dollars_kept("``a ` $b`` and $c") == f"``a ` $b`` and {DOLLAR}c"
    assert dollars_kept("`a`` $b` $c") == f"`a`` $b` {DOLLAR}c"
    assert dollars_kept("an odd ` then $d") == f"an odd ` then {DOLLAR}d"
