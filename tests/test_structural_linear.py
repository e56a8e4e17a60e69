"""Structural contexts and chunk sections in one pass over a document: the same answers as
rescanning the text before every chunk (the implementation kept below as the reference),
without its quadratic cost."""
import json
import os
import random
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ragkit import outline as outline_module
from ragkit.chunking import ChunkerConfig, chunk_document, past_opening_headings, section_of
from ragkit.contextualize.structural import structural_contexts
from ragkit.datasets import load_dataset
from ragkit.documents import Chunk, Document
from ragkit.outline import HEADING, Outline

RAGKIT = str(Path(sys.executable).parent / "ragkit")

ROOT = Path(__file__).resolve().parent.parent

# --------------------------------------------------------------------------- the reference
# ragkit's implementation before the outline, verbatim but for `_stop` and `_past_headings`
# in the contexts (a chunk opening on a heading once got the section before it): every chunk
# rescans text[:offset].

_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$", re.M)
_SYMBOL = re.compile(r"^([ \t]*)(?:pub(?:\([^)]*\))?\s+|export\s+|async\s+)*"
                     r"(class|def|fn|struct|impl|trait|enum|func|function|interface|mod)"
                     r"(?:<[^>\n]*>)?\s+([A-Za-z_]\w*)", re.M)
_META_KEYS = ("company", "quarter", "date", "product", "version")
_HEADING_LINE = re.compile(r"[ \t]*#{1,6}[ \t][^\n]*\n?\s*")


def old_heading_path(text, offset):
    if text.find("#", 0, offset) < 0:
        return []
    stack = []
    for match in _HEADING.finditer(text, 0, offset):
        level = len(match.group(1))
        stack = [(lvl, title) for lvl, title in stack if lvl < level]
        stack.append((level, match.group(2)))
    return [title for _, title in stack]


def old_enclosing_symbols(text, offset):
    if offset == 0:
        return []
    stack = []
    for match in _SYMBOL.finditer(text, 0, offset):
        indent = len(match.group(1).expandtabs(4))
        stack = [(ind, name) for ind, name in stack if ind < indent]
        stack.append((indent, f"{match.group(2)} {match.group(3)}"))
    line_start = text.rfind("\n", 0, offset) + 1
    current = len(text[line_start:offset]) - len(text[line_start:offset].lstrip())
    return [name for ind, name in stack if ind < current or ind == 0]


def _old_opening_line(text, limit=160):
    for line in text.splitlines():
        line = line.strip().lstrip("#/*-! ").strip()
        if len(line) > 3:
            return line[:limit]
    return ""


def _stop(sentence):  # one full stop: a title or heading that is a sentence has its own
    return sentence if sentence.endswith((".", "!", "?")) else sentence + "."


def old_structural_contexts(doc, chunks):
    parts0 = [_stop(f"Document: {doc.title or doc.id}")]
    path = doc.metadata.get("path")
    if path and path != doc.title:
        parts0.append(f"Path: {path}.")
    facts = [f"{key}: {doc.metadata[key]}" for key in _META_KEYS if doc.metadata.get(key)]
    if facts:
        parts0.append("; ".join(facts) + ".")
    out = []
    for chunk in chunks:
        if chunk.start <= 0:
            out.append(" ".join(parts0))
            continue
        parts = list(parts0)
        headings = old_heading_path(doc.text, _past_headings(doc.text, chunk.start))
        if headings:
            parts.append(_stop("Section: " + " > ".join(headings)))
        symbols = old_enclosing_symbols(doc.text, chunk.start)
        if symbols:
            parts.append("In: " + " > ".join(symbols) + ".")
        opening = _old_opening_line(doc.text)
        if opening and opening not in " ".join(parts):
            parts.append(f"Document opens: {opening}")
        out.append(" ".join(parts))
    return out


def _past_headings(text, start):  # a chunk opening on a heading is in that heading's section
    while (line := _HEADING_LINE.match(text, start)) and line.end() > start:
        start = line.end()
    return start


def old_section_of(doc, start, kind):
    if kind == "code":
        return old_enclosing_symbols(doc.text, start)
    return old_heading_path(doc.text, _past_headings(doc.text, start))


# --------------------------------------------------------------------------- same answers

@pytest.fixture(params=["direct", "outline"])
def direct(request, monkeypatch):
    """Small offsets are rescanned directly; `outline` forces the outline for every offset."""
    if request.param == "outline":
        monkeypatch.setattr(outline_module, "DIRECT", 0)
    return request.param


# fragments that reach the patterns' corners: headings cut by blank lines or closed by #s,
# definitions spread over lines, `pub(` without `)`, tabs, carriage returns, long blanks
FRAGMENTS = ["# Title", "## Sub section ##", "### ", "#", "#######", "#\n\nLate title",
             "###### six", "# a  #  ", "text with # inside", "  # indented", "\n", "\n\n",
             "\n   \n", "   ", "\t", "\r\n", "word ", "Refunds within seven days.",
             "class Foo:", "    def bar(self):", "        return 1", "def", "def\n  late",
             "\tdef tabbed():", "pub(crate) fn run<T>()", "pub(", "  pub async fn x", ")",
             "export function f", "export\n\nclass Later", "impl<T> Trait for X", "function",
             "struct S {", "}", "async def g", "mod m;", "interface I", "classy thing",
             "  " * 40, "x" * 50, "é", "\u2003", "#" * 3 + " " * 30 + "\n" * 3, "t#",
             "end ## #"]


def _random_text(rng, n):
    return "".join(rng.choice(FRAGMENTS) + rng.choice(["", "", " ", "\n"]) for _ in range(n))


def test_headings_and_symbols_match_the_rescan_at_every_offset(direct):
    rng = random.Random(7)
    checked = 0
    for _ in range(250):
        text = _random_text(rng, rng.randint(1, 60))
        found = Outline(text)
        offsets = set(rng.sample(range(len(text) + 1), min(len(text) + 1, 40)))
        offsets |= {len(text), 0, *(m.start() for m in re.finditer("\n", text))}
        for offset in sorted(offsets):
            assert found.headings(offset) == old_heading_path(text, offset), (text, offset)
            assert found.symbols(offset) == old_enclosing_symbols(text, offset), (text, offset)
            checked += 1
    assert checked > 10_000


@pytest.fixture(scope="module")
def shipped():
    return load_dataset(ROOT / "data").documents


@pytest.mark.parametrize("size, overlap", [(512, 64), (48, 16)])
def test_shipped_corpus_contexts_and_sections_are_unchanged(shipped, direct, size, overlap):
    config = ChunkerConfig(size, overlap)
    compared = 0
    for doc in shipped:
        chunks = chunk_document(doc, config)
        assert structural_contexts(doc, chunks) == old_structural_contexts(doc, chunks), doc.id
        kind = chunks[0].metadata["chunker"]
        assert [c.metadata["section"] for c in chunks] == \
            [old_section_of(doc, c.start, kind) for c in chunks], doc.id
        compared += len(chunks)
    assert compared > (150 if size == 512 else 1500)


def _markdown(rng, kb):
    parts, size = [], 0
    while size < kb * 1024:
        level = rng.choice([1, 2, 2, 3, 3, 3, 4])
        parts.append(f"{'#' * level} Part {len(parts)} of the manual\n\n")
        parts.append(" ".join(rng.choice(["the", "kettle", "boils", "water", "in", "two",
                                          "minutes", "refunds", "are", "due"])
                              for _ in range(rng.randint(20, 400))) + ".\n\n")
        size += len(parts[-2]) + len(parts[-1])
    return "".join(parts)


def _code(rng, kb):
    lines, size = ['"""A generated module."""', ""], 0
    while size < kb * 1024:
        n = len(lines)
        lines += [f"class Thing{n}:", f"    def method_{n}(self, x):", "        if x:",
                  *[f"            y = x * {i}  # step {i}" for i in range(rng.randint(1, 30))],
                  "        return y", "", f"def helper_{n}(a, b):",
                  *[f"    a += b  # {i}" for i in range(rng.randint(1, 20))], "    return a", ""]
        size += sum(len(line) + 1 for line in lines[n:])
    return "\n".join(lines)


@pytest.mark.parametrize("kind", ["markdown", "code", "one line"])
def test_synthetic_documents_give_the_same_contexts(kind):
    rng = random.Random(3)
    if kind == "markdown":
        doc = Document("manual", _markdown(rng, 80), "Kettle manual")
    elif kind == "code":
        doc = Document("things.py", _code(rng, 40), "", {"path": "src/things.py"})
    else:
        doc = Document("min.js", "function f(a){return a}; " + "var x = 1; " * 6_000, "")
    chunks = chunk_document(doc, ChunkerConfig(64, 16))
    assert len(chunks) > 100
    assert structural_contexts(doc, chunks) == old_structural_contexts(doc, chunks)
    kind_ = chunks[0].metadata["chunker"]
    assert [c.metadata["section"] for c in chunks] == \
        [old_section_of(doc, c.start, kind_) for c in chunks]


# --------------------------------------------------------------------------- linear time

def _timed(doc):
    start = time.process_time()
    chunks = chunk_document(doc)
    structural_contexts(doc, chunks)
    return time.process_time() - start, chunks


def test_chunking_and_contextualizing_grow_linearly_with_the_document():
    """2 MB of code and a 4 MB one-line file: seconds, not minutes (the rescan took 11 s for
    2 MB and did not finish a 50 MB one-line file in ten minutes)."""
    rng = random.Random(5)
    code = Document("big.py", _code(rng, 2048), "")
    seconds, chunks = _timed(code)
    assert len(chunks) > 1000 and seconds < 6, seconds
    line = Document("one.txt", " ".join(["kettle", "water", "boils"] * 350_000), "")
    seconds, chunks = _timed(line)
    assert len(chunks) > 1000 and seconds < 6, seconds


# --------------------------------------------------------------------------- long blank runs

def test_the_heading_pattern_matches_as_the_backtracking_one_did():
    """Same matches, groups and ends as `_HEADING` (the pattern before), also on a cut text:
    white space of every kind, newlines and `#` runs in every order, where the two differ in
    how they search."""
    rng = random.Random(11)
    parts = ["#", "##", "#######", " ", "  ", "\t", "\n", "\n\n", "x", "ab", "\xa0", "\x0b",
             "\u2003", " #", "# ", "\n#", "\n## y", "\r"]
    compared = 0
    for _ in range(20_000):
        text = "".join(rng.choice(parts) for _ in range(rng.randint(1, 30)))
        start = rng.randint(0, len(text))
        for pos, end in ((0, len(text)), (start, rng.randint(start, len(text)))):
            assert [(m.span(), m.groups()) for m in HEADING.finditer(text, pos, end)] == \
                [(m.span(), m.groups()) for m in _HEADING.finditer(text, pos, end)], text
            compared += 1
    assert compared == 40_000


def _indexed(tmp_path: Path, name: str, text: str, *options: str,
             timeout: float = 90) -> list[dict]:
    """The chunk rows of `ragkit index` (no embedder, no API key) of a folder holding `name`,
    within `timeout` seconds; the index is `tmp_path / "idx"`, the home `tmp_path / "home"`."""
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / name).write_text(text)
    done = subprocess.run([RAGKIT, "index", str(folder), "--out", str(tmp_path / "idx"),
                           "--embedder", "none", *options], capture_output=True, text=True,
                          timeout=timeout, env=_env(tmp_path))
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in (tmp_path / "idx" / "chunks.jsonl").open()]


def _env(tmp_path: Path) -> dict[str, str]:
    """The environment without ANTHROPIC_API_KEY, ragkit's home under `tmp_path`."""
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    return {**env, "RAGKIT_HOME": str(tmp_path / "home")}


def test_a_heading_holding_a_long_blank_run_indexes_in_seconds(tmp_path):
    """A heading line with a run of spaces (a date pushed to the right, a PDF's spacing): the
    heading pattern backtracked over every split of the run at each character of the title,
    in time cubic in the run — 3,200 spaces took 35 s to index, these 10,000 twenty minutes
    (the chunk sections and the offline stand-in's contexts both read headings, and so does
    `ragkit ask`, whose source line showed the whole 10,000-space heading)."""
    body = "\n\n".join(" ".join(["soil", "samples", "were", "dried"] * 24) for _ in range(10))
    rows = _indexed(tmp_path, "report.md", f"# Field report{' ' * 10_000}March 2025\n\n"
                    f"{body}\n\n## Results\n\n{body}\n", "--contextualizer", "claude")
    title = "Field report" + " " * 187 + "…"  # its label: 199 characters and an ellipsis
    assert [row["metadata"]["section"] for row in rows] == \
        [[title]] * 3 + [[title, "Results"]] * 2
    assert rows[0]["context"] == f"Document: {title}."
    asked = subprocess.run([RAGKIT, "ask", "--index", str(tmp_path / "idx"), "--k", "2",
                            "were the soil samples dried?"], capture_output=True, text=True,
                           timeout=60, env=_env(tmp_path))
    assert asked.returncode == 0, asked.stderr  # `ask` reads the passages' headings alike,
    assert f"[1] report.md#0 — {title}" in asked.stdout.splitlines()  # as one label


def test_a_megabyte_heading_line_indexes_in_seconds(tmp_path):
    """A 3.6 MB heading on one line (a log or a table pasted after `# `): every chunk starting
    in it rescanned the line from its start for its section and its context, quadratic in the
    line — 1.2 MB took 21 s to index, this one would take minutes. Its chunks still read the
    heading cut where they start, as the rescan did (past 200 characters: the same label)."""
    words = " ".join(["soil", "samples", "were", "dried"] * 150_000)
    body = "\n\n".join(" ".join(["soil", "samples", "were", "dried"] * 24) for _ in range(10))
    rows = _indexed(tmp_path, "report.md", f"# Field report {words}\n\n{body}\n\n"
                    f"## Results\n\n{body}\n", timeout=60)
    title = f"Field report {words}"[:199] + "…"
    assert title.endswith(" soil samples were …")
    assert [row["metadata"]["section"] for row in rows] == \
        [[title]] * 1342 + [[title, "Results"]] * 3
    opening = f"Document: {title}. Path: report.md."
    assert rows[0]["context"] == opening
    assert {row["context"] for row in rows[1:]} == \
        {f"{opening} Section: {title}.", f"{opening} Section: {title} > Results."}


@pytest.mark.parametrize("text, section", [
    ("# Title\n\n" + "kestrel refunds shipping policy. " * 360_000, ["Title"]),  # 12 MB
    ("#" * 4_000_000, []),  # a line of `#`s: a heading's start, no heading
    ("# T\n\n" + "a#b " * 1_000_000, ["T"]),
])
def test_a_long_line_that_is_no_heading_indexes_in_seconds(tmp_path, text, section):
    """Each chunk of a long line rescanned it from its start for a heading (the line's own
    start was a place one could begin): a 4 MB paragraph under a heading, an HTML page's one
    `<p>`, took 22 s to index and 8 MB 89 s; 4 MB of `#`s took 124 s. Now only line starts a
    heading can begin at are tried."""
    rows = _indexed(tmp_path, "page.md", text, timeout=60)
    assert len(rows) > 1000
    assert all(row["metadata"]["section"] == section for row in rows)


def test_a_title_or_heading_that_ends_a_sentence_gets_no_second_stop(tmp_path):
    """'Document: What changed in 2.10?. Path: …' was embedded with every chunk."""
    rows = _indexed(tmp_path, "notes.md", "---\ntitle: What changed in 2.10?\n---\n"
                    "# Why pair again?\n\nOld pairings expire after the update to version "
                    "2.10.\n\nPair each pump again from the menu.\n",
                    "--chunk-size", "16", "--overlap", "0")
    head = "Document: What changed in 2.10? Path: notes.md."
    assert [row["context"] for row in rows] == [head, f"{head} Section: Why pair again?",
                                                f"{head} Section: Why pair again?"]


def test_a_chunk_opening_on_a_heading_is_placed_in_that_section(tmp_path):
    """With `--overlap 0` every chunk after the first of a section opens on its heading: its
    context named the section before it ("Section: Billing." over the text of "Refunds"),
    while its `metadata.section` (citations, answer prompts) named the right one."""
    body = " ".join(["the", "kettle", "boils", "water", "in", "two", "minutes"] * 3) + "."
    text = (f"# Manual\n\n{body}\n\n## Billing\n\n{body}\n\n## Refunds\n\n{body}\n\n"
            f"### Late claims\n\n{body}\n")
    rows = _indexed(tmp_path, "manual.md", text, "--chunk-size", "30", "--overlap", "0")
    head = "Document: Manual. Path: manual.md."
    assert [(row["text"].split("\n")[0], row["context"]) for row in rows] == [
        ("# Manual", head),
        ("## Billing", f"{head} Section: Manual > Billing."),
        ("## Refunds", f"{head} Section: Manual > Refunds."),
        ("### Late claims", f"{head} Section: Manual > Refunds > Late claims.")]
    assert [row["metadata"]["section"] for row in rows] == [
        ["Manual"], ["Manual", "Billing"], ["Manual", "Refunds"],
        ["Manual", "Refunds", "Late claims"]]


@pytest.mark.parametrize("overlap", [0, 16])
def test_every_prose_chunks_context_names_its_own_section(shipped, overlap):
    """The section a chunk's structural context states is the one its metadata (citations,
    answer prompts) carries, on every shipped prose document."""
    compared = 0
    for doc in shipped:
        chunks = chunk_document(doc, ChunkerConfig(64, overlap))
        if chunks[0].metadata["chunker"] != "prose":
            continue
        for chunk, context in zip(chunks, structural_contexts(doc, chunks)):
            said = re.search(r" Section: (.*?)\.?(?: In: | Document opens: |$)", context)
            if chunk.start > 0:
                assert (said.group(1).split(" > ") if said else []) == \
                    chunk.metadata["section"], (doc.id, chunk.id, context)
                compared += 1
    assert compared > 300


def test_a_chunk_starting_on_a_hash_inside_a_line_reads_no_heading():
    """"I like C# and F# a lot." repeated on one 9.6 MB line: a chunk starting at "# and F#"
    was taken to open on a heading, read to the end of the line — for every such chunk, twice
    (its section and its context): quadratic, 58 s to index grew to 84 s. A heading line
    starts its line (up to three spaces in)."""
    text = "Intro.\n\nI like C# and F# a lot.\n   ## Deep\nBody.\n"
    middle = text.index("# and")
    assert past_opening_headings(text, middle) == middle
    assert past_opening_headings(text, text.index("## Deep")) == text.index("Body.")
    assert past_opening_headings(text, 0) == 0
    doc = Document("notes.md", text, "Notes")
    chunk = Chunk("notes.md#1", "notes.md", text[middle:], "", middle, len(text))
    assert structural_contexts(doc, [chunk]) == ["Document: Notes. Document opens: Intro."]
