"""The report as a reader sees it: money with its significant digits, pandas' two-level
column headers as real headers, and wide tables that fit a 1,400-px-wide window.

The tables are the cookbook's own shapes with its own recorded values (notebooks 04, 05, 06
and 07), recorded through `table_json` as a notebook records them and rendered by
`write_report`; no notebook runs, so the tests take about a second (the width test drives
Debian's chromium when it is installed and is skipped otherwise)."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest

from ragkit.money import dollars
from ragkit.record import table_frame, table_json
from ragkit.report import write_report

RUN = {"command": "run", "started": "2026-12-02T10:00:00+00:00", "seconds": 420.0,
       "ragkit": "0.1.0", "git": {"commit": "1a2b3c4d5e6f", "dirty": False},
       "python": "3.11.7", "platform": "Linux", "cpu_count": 2, "jobs": 1,
       "packages": {"pandas": "2.2"}, "backends": {"anthropic": "offline"},
       "datasets": {"data": {"sha256": "0" * 64, "files": 1, "bytes": 5}}}

LOOPING = pd.DataFrame(  # notebook 05: caching the agent's growing prefix
    {"turns": [4, 5], "prompt tokens": [11546, 22962], "largest prompt": [4457, 6003],
     "read from cache": [0, 15025], "$ no cache": [0.011546, 0.022962],
     "$ with cache": [0.01266, 0.01094], "saving %": [-9.65, 52.35],
     "source": ["projection", "projection"]},
    index=pd.Index(["3 file tools (section 2)", "6 tools, search and a note"], name="run"))
METHODS = pd.DataFrame(  # notebook 07: fixed RAG against long context and the agent
    {"accuracy %": [9.1, 12.1, 9.1, 9.1, 3.0], "calls": [1.0, 1.0, 5.0, 1.0, 2.3],
     "input tokens": [2981.7, 1093.4, 3370.6, 69714.2, 5213.5],
     "output tokens": [15.9, 19.0, 71.9, 15.9, 152.6],
     "$/query": [0.0031, 0.00124, 0.0037, 0.00951, 0.00602],
     "$/query uncached": [0.0031, 0.00124, 0.0037, 0.0698, 0.00602]},
    index=["fixed RAG (top 5)", "CRAG (offline evaluator)", "Self-RAG (offline rules)",
           "long context (cached)", "agentic (loop of notebook 05)"])
CORPUS = pd.DataFrame(  # a bill large enough for thousands separators
    {"cached $": [1020.4, 0.235], "uncached $": [12_345.678, 0.436], "documents": [131, 131]},
    index=["claude-haiku-4-5 (whole archive)", "claude-3-haiku-20240307"])
SHIPPED = pd.DataFrame({"Pass@5": [84.6, 95.0], "95% low": [80.2, 92.1],
                        "95% high": [89.3, 97.5]}, index=["no rerank", "rerank offline"])
INTERVALS = pd.concat({"Pass@5": SHIPPED, "Pass@20": SHIPPED.rename(
    columns={"Pass@5": "Pass@20"}) + [4.5, 5.7, 2.5]}, axis=1)  # notebook 04's layout
ANSWER_K = pd.DataFrame(  # notebook 04: the widest table of the cookbook
    {"Pass@k": [89.8, 95.0, 99.7, 100.0], "answered %": [28.9, 29.5, 29.5, 28.9],
     "cites golden %": [23.3, 23.9, 24.5, 23.3],
     "faithfulness_lexical": [0.306, 0.335, 0.405, 0.457],
     "answer_relevancy_cosine": [0.137, 0.140, 0.140, 0.139],
     "context_precision_golden": [0.816, 0.821, 0.812, 0.811],
     "context_recall_golden": [0.898, 0.950, 0.997, 0.997],
     "prompt tokens (est.)": [1775.6, 2890.6, 5668.7, 7473.6],
     "output tokens (est.)": [18.9, 18.8, 19.3, 19.2],
     "$ / query (projected)": [0.00238, 0.00299, 0.00577, 0.00757]},
    index=pd.Index([3, 5, 10, 20], name="chunks handed to the answerer k"))
TABLES = {"cost_of_looping": (LOOPING, "Input cost of each run on claude-haiku-4-5"),
          "rag_vs_long_context": (METHODS, "Fixed RAG and long context (dollars projected)"),
          "corpus_projection": (CORPUS, "Contextualizing a corpus, projected ($)"),
          "rerank_intervals": (INTERVALS, "Seeded 95 % bootstrap intervals over questions"),
          "answer_k_sweep": (ANSWER_K, "Chunks handed to the answerer per k")}


def _document() -> dict:
    notebook = {"name": "04_tables.ipynb", "title": "04 · Cost tables", "learn": [],
                "finding": "caching saves 52.4 %", "status": "ok", "seconds": 3.0,
                "error": None, "parameters": {}, "overridden": [], "datasets": [],
                "tables": {name: table_json(frame, caption)
                           for name, (frame, caption) in TABLES.items()},
                "numbers": {}, "values": {}, "figures": [], "executed": "04_tables.ipynb"}
    return {"format": "ragkit-cookbook-results", "version": 1, "run": RUN,
            "notebooks": [notebook]}


class Tables(HTMLParser):
    """Every table of a page: its caption, header rows (text, colspan) and body rows (text)."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[dict] = []
        self.caption: list[str] = []
        self.cell: list[str] | None = None
        self.span, self.part, self.in_caption = 1, "", False

    def handle_starttag(self, tag, attrs):
        if tag == "figcaption":
            self.in_caption, self.caption = True, []
        elif tag == "table":
            self.tables.append({"caption": "".join(self.caption), "head": [], "body": []})
            self.caption = []
        elif tag in ("thead", "tbody"):
            self.part = tag
        elif tag == "tr" and self.tables:
            self.tables[-1]["head" if self.part == "thead" else "body"].append([])
        elif tag in ("th", "td"):
            self.cell, self.span = [], int(dict(attrs).get("colspan") or 1)

    def handle_endtag(self, tag):
        if tag == "figcaption":
            self.in_caption = False
        elif tag in ("th", "td") and self.cell is not None:
            text = "".join(self.cell).strip()
            row = self.tables[-1]["head" if self.part == "thead" else "body"][-1]
            row.append((text, self.span) if self.part == "thead" else text)
            self.cell = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell.append(data)
        elif self.in_caption:
            self.caption.append(data)


def _tables(page: str) -> dict[str, dict]:
    parser = Tables()
    parser.feed(page)
    return {t["caption"]: t for t in parser.tables}


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("report")
    document = _document()
    (folder / "results.json").write_text(json.dumps(document))
    write_report(json.loads((folder / "results.json").read_text()), folder)
    return folder


def _table(report: Path, name: str) -> dict:
    caption = TABLES[name][1]
    return next(t for c, t in _tables((report / "report.html").read_text()).items()
                if c.endswith(caption))


def _header(table: dict) -> list[str]:
    """The label of every column, the row names' column first (its corner cell spans the
    header rows of a two-level header)."""
    last = [text for text, _ in table["head"][-1]]
    return last if len(last) == len(table["body"][0]) else ["", *last]


def _significant(text: str) -> int:
    digits = re.sub(r"[^0-9]", "", text).lstrip("0")
    return len(digits)


@pytest.mark.parametrize("value, text", [
    (0.00512, "$0.00512"), (0.0107, "$0.0107"), (0.011546, "$0.0115"), (0.01, "$0.0100"),
    (1.0234, "$1.02"), (3.8412, "$3.84"), (11.6875, "$11.69"), (117.85, "$118"),
    (1020.4, "$1,020"), (12_345.678, "$12,346"), (0.0099996, "$0.0100"), (999.7, "$1,000"),
    (0.0, "$0.00"), (-0.0123, "-$0.0123"), (2, "$2.00"), (0.000001234, "$0.00000123"),
])
def test_money_keeps_three_significant_digits(value, text):
    assert dollars(value) == text


def test_cost_cells_show_the_cost_story_with_significant_digits(report):
    table = _table(report, "cost_of_looping")
    header = _header(table)
    rows = {row[0]: dict(zip(header[1:], row[1:])) for row in table["body"]}
    cheap, long = rows["3 file tools (section 2)"], rows["6 tools, search and a note"]
    assert (long["$ no cache"], long["$ with cache"], long["saving %"]) == (
        "$0.0230", "$0.0109", "52.4")
    assert (cheap["$ no cache"], cheap["$ with cache"]) == ("$0.0115", "$0.0127")
    assert (cheap["turns"], cheap["prompt tokens"], long["read from cache"]) == (
        "4", "11,546", "15,025")


def test_no_money_cell_hides_its_value(report):
    page = (report / "report.html").read_text()
    shown = 0
    for name, (frame, _) in TABLES.items():
        table = _table(report, name)
        header = _header(table)[1:]
        for row, values in zip(table["body"], frame.itertuples(index=False)):
            for column, text, value in zip(header, row[1:], values):
                if "$" not in column or isinstance(value, (int, str)):
                    continue
                shown += 1
                assert text.startswith("$") and _significant(text) >= 2, (column, text)
                assert float(text[1:].replace(",", "")) == pytest.approx(value, rel=0.005)
    assert shown == 4 + 10 + 4 + 4
    assert "$0.00<" not in page and ">0.00<" not in page and ">0.01<" not in page
    corpus = _table(report, "corpus_projection")["body"]
    assert corpus[0][1:] == ["$1,020", "$12,346", "131"]  # counts stay counts


def test_two_level_columns_render_as_two_header_rows(report):
    page = (report / "report.html").read_text()
    assert "('" not in page and "&#x27;" not in page.split("<tbody>", 1)[1].split("</figure>")[0]
    table = _table(report, "rerank_intervals")
    assert table["head"] == [
        [("", 1), ("Pass@5", 3), ("Pass@20", 3)],
        [("Pass@5", 1), ("95% low", 1), ("95% high", 1),
         ("Pass@20", 1), ("95% low", 1), ("95% high", 1)]]
    assert table["body"][1] == ["rerank offline", "95.0", "92.1", "97.5", "99.5", "97.8", "100.0"]


def test_two_level_columns_are_stored_joined_and_come_back_as_levels():
    entry = table_json(INTERVALS, "intervals")
    assert entry["columns"] == ["Pass@5", "Pass@5 · 95% low", "Pass@5 · 95% high",
                                "Pass@20", "Pass@20 · 95% low", "Pass@20 · 95% high"]
    assert entry["column_levels"][1] == ["Pass@5", "95% low"]
    assert entry["data"][0] == [84.6, 80.2, 89.3, 89.1, 85.9, 91.8]  # numbers untouched
    back = table_frame(json.loads(json.dumps(entry)))
    assert list(back.columns) == list(INTERVALS.columns)
    assert back.loc["rerank offline", ("Pass@20", "95% high")] == 100.0


def test_a_report_of_an_older_results_json_still_shows_no_tuples(tmp_path):
    document = _document()  # written before two-level columns were stored as levels
    entry = document["notebooks"][0]["tables"]["rerank_intervals"]
    entry["columns"] = [str(c) for c in INTERVALS.columns]
    del entry["column_levels"]
    write_report(document, tmp_path)
    page = (tmp_path / "report.html").read_text()
    assert "('" not in page and "&#x27;Pass@5&#x27;" not in page
    assert _table(tmp_path, "rerank_intervals")["head"][0][1] == ("Pass@5", 3)


# A page script measures, for each table, how far it reaches past the right edge of the
# window and how wide its scrolling box is against its content.
MEASURE = """<script>
const root = document.documentElement;
document.title = JSON.stringify([...document.querySelectorAll('table')].map(t => {
  const box = t.closest('.scroll') || t.parentElement;
  const figure = t.closest('figure'), section = t.closest('section');
  const name = figure ? figure.querySelector('figcaption').textContent : section.id;
  return [name.slice(0, 60), Math.round(t.getBoundingClientRect().right),
          box.scrollWidth - box.clientWidth, root.clientWidth, root.scrollWidth];
}));
</script>"""


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    pytest.skip("no chromium installed (Debian: apt-get install chromium)")


def _measured(folder: Path, tmp_path: Path) -> list[list]:
    """Each table of `folder`'s report.html drawn by chromium in a 1,400-px window: caption,
    right edge, pixels scrolled out of sight, window width, page width."""
    browser = _chromium()
    page = (folder / "report.html").read_text().replace("</body>", MEASURE + "</body>")
    (tmp_path / "measure.html").write_text(page)
    dom = subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu",
         "--disable-background-networking", "--window-size=1400,900", "--dump-dom",
         (tmp_path / "measure.html").as_uri()],
        capture_output=True, text=True, timeout=60, check=True).stdout
    return json.loads(re.search(r"<title>(.*?)</title>", dom, re.S)[1].replace(
        "&amp;", "&").replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"'))


def test_every_column_of_every_table_is_in_sight_at_1400_px(report, tmp_path):
    measured = _measured(report, tmp_path)
    assert len(measured) >= len(TABLES) + 2  # the tables, the findings and the environment
    for caption, right, hidden, window, page_width in measured:
        assert hidden <= 1 and right <= window == page_width, (caption, right, hidden, window)


def test_a_long_file_name_wraps_instead_of_pushing_the_other_columns_out_of_sight(tmp_path):
    """Notebook 08's table of files on a folder holding a long name without spaces drew the
    name on one line and scrolled every other column out of the window, the reasons for a
    skipped file squeezed to a word a line beside it."""
    name = "_".join(["Larkspur", "Vale", "returns", "and", "refund", "policy"] * 4) + ".pdf"
    files = pd.DataFrame({"format": ["pdf", "md"], "pages": [12, None], "chars": [48213, 0],
                          "skipped": ["", "its name holds a control character (\\x1b); "
                                          "rename the file"], "chunks": [31, 0]},
                         index=pd.Index([name, "notes.md"], name="file"))
    document = _document()
    document["notebooks"][0]["tables"] = {"files": table_json(files, "What was extracted")}
    write_report(document, tmp_path)
    for caption, right, hidden, window, page_width in _measured(tmp_path, tmp_path):
        assert hidden <= 1 and right <= window == page_width, (caption, right, hidden, window)


def test_a_name_holding_a_comma_is_set_apart_in_a_list_of_names():
    # notebook 08's finding read "bm25, hybrid + rerank, hybrid, no context and hybrid
    # weighted_rank" — four names where there were three
    from ragkit.text_stats import joined
    assert joined(["bm25", "hybrid, no context", "hybrid"]) == \
        "bm25, `hybrid, no context` and hybrid"
    assert joined(["a"]) == "a" and joined(["a", "b"]) == "a and b"


def test_a_notebook_named_like_a_script_url_is_linked_as_a_file(tmp_path):
    """`--notebook javascript:alert(1).ipynb` linked its executed copy as a script URL, and a
    name opening with "<b" opened a tag where the report shows the notebook's number."""
    document = _document()
    first = document["notebooks"][0]
    document["notebooks"] = [dict(first, name=name, executed=name) for name in
                             ("javascript:alert(1).ipynb", "<b>_tables.ipynb")]
    write_report(document, tmp_path)
    page = (tmp_path / "report.html").read_text()
    links = re.findall(r"href='([^']*)'", page)
    assert "javascript%3Aalert%281%29.ipynb" in links and "%3Cb%3E_tables.ipynb" in links
    assert not any(link.lower().startswith("javascript:") for link in links)
    assert "<b." not in page and "#nb-&lt;b" in page


WORDS = """<script>
const probe = document.createElement('span');
probe.style.cssText = 'position:absolute;white-space:nowrap;visibility:hidden';
document.body.appendChild(probe);
const broken = [];
for (const cell of document.querySelectorAll('figure tbody th, figure tbody td')) {
  const style = getComputedStyle(cell);
  probe.style.font = style.font;
  const room = cell.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  for (const word of cell.textContent.split(/\\s+/).filter(w => w && w.length < 30)) {
    probe.textContent = word;
    if (probe.getBoundingClientRect().width > room + 1) broken.push(word);
  }
}
document.title = JSON.stringify(broken);
</script>"""


def test_a_table_wider_than_the_window_keeps_its_words_whole(tmp_path):
    """Twelve columns of metrics scroll in a 900-px window; their row labels and a text
    cell were squeezed to the width of a header, "embeddings" drawn as "embeddin|gs" and
    "returns_policy.pdf" as "returns_p|olicy.pdf". Only a name of 30 characters or more
    may break anywhere."""
    columns = {f"Pass@{k} {m}": [61.2, 70.4] for k in (5, 10, 20, 50)
               for m in ("bm25", "dense", "hybrid")}
    wide = pd.DataFrame({"skipped": ["", "its name holds a control character"], **columns},
                        index=pd.Index(["contextual embeddings + contextual BM25",
                                        "returns_policy.pdf"], name="file"))
    document = _document()
    document["notebooks"][0]["tables"] = {"wide": table_json(wide, "Retrieval by file")}
    write_report(document, tmp_path)
    page = (tmp_path / "report.html").read_text().replace("</body>", WORDS + "</body>")
    (tmp_path / "words.html").write_text(page)
    dom = subprocess.run(
        [_chromium(), "--headless", "--no-sandbox", "--disable-gpu",
         "--disable-background-networking", "--window-size=900,900", "--dump-dom",
         (tmp_path / "words.html").as_uri()],
        capture_output=True, text=True, timeout=60, check=True).stdout
    assert json.loads(re.search(r"<title>(.*?)</title>", dom, re.S)[1]) == []


def test_token_counts_are_whole_and_counts_have_thousands_separators_in_every_column(tmp_path):
    """The report showed 10048.4 listwise input tokens (its caption's "Pass@k" made the
    column points of 100), 18.1 output tokens beside 2,700 input tokens, and counts under
    10,000 without separators beside larger ones: 2458 over 18,559 prompt tokens, 3390
    characters over 30,587. A token count is whole, unless its column is named a mean."""
    depth = pd.DataFrame(  # notebook 04: the reranker's depth, caption names Pass@k
        {"Pass@5": [93.4, 94.8], "listwise input tokens (est.)": [10048.40251, 113680.1],
         "listwise output tokens (est.)": [32.0, 391.4], "mean output tokens": [32.04, 391.44]},
        index=pd.Index([20, 150], name="rerank candidates N"))
    windows = pd.DataFrame(  # notebook 07: the corpus against the window, all whole numbers
        {"documents": [40, 3], "prompt tokens": [18559, 2458], "limit": [197952, 197952]},
        index=["code/", "notes/"])
    files = pd.DataFrame({"format": ["html", "html"], "chars": [30587, 3390]},
                         index=pd.Index(["manuals/api.html", "notes/faq.html"], name="file"))
    document = _document()
    document["notebooks"][0]["tables"] = {
        "depth": table_json(depth, "Pass@k and MRR by rerank depth N"),
        "methods": table_json(METHODS, "Fixed RAG and long context (dollars projected)"),
        "windows": table_json(windows, "Estimated prompt tokens of the corpus"),
        "files": table_json(files, "What was extracted from each file")}
    write_report(document, tmp_path)
    shown = {caption.split(". ", 1)[1]: table["body"]
             for caption, table in _tables((tmp_path / "report.html").read_text()).items()
             if caption.startswith("Table")}
    assert shown["Pass@k and MRR by rerank depth N"] == [
        ["20", "93.4", "10,048", "32", "32.0"], ["150", "94.8", "113,680", "391", "391.4"]]
    methods = shown["Fixed RAG and long context (dollars projected)"]
    assert [row[3:5] for row in methods] == [["2,982", "16"], ["1,093", "19"], ["3,371", "72"],
                                             ["69,714", "16"], ["5,214", "153"]]
    assert shown["Estimated prompt tokens of the corpus"] == [
        ["code/", "40", "18,559", "197,952"], ["notes/", "3", "2,458", "197,952"]]
    assert shown["What was extracted from each file"] == [
        ["manuals/api.html", "html", "30,587"], ["notes/faq.html", "html", "3,390"]]


def test_number_row_labels_have_separators_and_a_count_of_calls_stays_a_count(tmp_path):
    """Notebook 07's cost table read "1000" queries beside "$0.00714"; notebook 04's depth
    sweep printed 1.0 listwise calls (its caption's "Pass@k" made the column points of 100)
    where the notebook shows 1 and 12.3."""
    costs = pd.DataFrame(  # notebook 07: the cost as queries add up, rows are query counts
        {"$/query cached": [0.0872, 0.0151, 0.00786, 0.00714],
         "$/query uncached": [0.0698] * 4, "saving %": [-25.0, 78.4, 88.7, 89.8]},
        index=pd.Index([1, 10, 100, 1000], name="queries"))
    depth = pd.DataFrame(  # notebook 04: the reranker's depth, caption names Pass@k
        {"Pass@5": [93.4, 93.9, 94.5, 94.8], "MRR": [0.809, 0.815, 0.814, 0.817],
         "listwise calls": [1.0, 4.0, 9.0, 12.3]},
        index=pd.Index([20, 50, 100, 1500], name="rerank candidates N"))
    document = _document()
    document["notebooks"][0]["tables"] = {
        "costs": table_json(costs, "Long context: projected cost per query, cached vs "
                                   "uncached, as queries add up"),
        "depth": table_json(depth, "Pass@k and MRR by rerank depth N")}
    write_report(document, tmp_path)
    shown = {caption.split(". ", 1)[1]: table["body"]
             for caption, table in _tables((tmp_path / "report.html").read_text()).items()
             if caption.startswith("Table")}
    assert shown["Long context: projected cost per query, cached vs uncached, as queries "
                 "add up"] == [["1", "$0.0872", "$0.0698", "-25.0"],
                               ["10", "$0.0151", "$0.0698", "78.4"],
                               ["100", "$0.00786", "$0.0698", "88.7"],
                               ["1,000", "$0.00714", "$0.0698", "89.8"]]
    assert shown["Pass@k and MRR by rerank depth N"] == [
        ["20", "93.4", "0.809", "1"], ["50", "93.9", "0.815", "4"],
        ["100", "94.5", "0.814", "9"], ["1,500", "94.8", "0.817", "12.3"]]
