from pathlib import Path

import pytest

from ragkit.chunking import TOKEN, ChunkerConfig, chunk_document, count_tokens
from ragkit.file_kinds import is_code
from ragkit.documents import Document, RagkitError
from ragkit.windows import window_spans, windows


def _prose(sections: int = 4, sentences: int = 60) -> str:
    return "\n\n".join(f"# Part {s}\n\n" + " ".join(f"Sentence {s} {i} says {i * s}."
                                                     for i in range(sentences))
                       for s in range(sections))


def test_short_document_is_one_whole_chunk():
    doc = Document("faq.md", "  Refunds take 7 days.\n")
    (chunk,) = chunk_document(doc)
    assert (chunk.id, chunk.text, chunk.start, chunk.end) == ("faq.md#0", "Refunds take 7 days.", 2, 22)


def test_chunks_respect_budget_overlap_and_offsets():
    doc = Document("guide.md", _prose())
    config = ChunkerConfig(size=128, overlap=16)
    chunks = chunk_document(doc, config)
    assert len(chunks) > 4
    for n, chunk in enumerate(chunks):
        assert chunk.id == f"guide.md#{n}"
        assert doc.text[chunk.start:chunk.end] == chunk.text
        assert count_tokens(chunk.text) <= 128
    for prev, nxt in zip(chunks, chunks[1:]):
        assert nxt.start < prev.end  # neighbours overlap
        assert count_tokens(doc.text[nxt.start:prev.end]) <= 16 + 1
    covered = set()
    for chunk in chunks:
        covered.update(range(chunk.start, chunk.end))
    assert all(i in covered for i, ch in enumerate(doc.text) if not ch.isspace())


def test_headings_are_preferred_split_points():
    doc = Document("g.md", _prose(sections=3, sentences=12))  # each section ~60 tokens
    chunks = chunk_document(doc, ChunkerConfig(size=80, overlap=0))
    assert [c.text.splitlines()[0] for c in chunks] == ["# Part 0", "# Part 1", "# Part 2"]


def test_ids_are_stable_across_runs():
    doc = Document("g.md", _prose())
    assert chunk_document(doc, ChunkerConfig(100, 10)) == chunk_document(doc, ChunkerConfig(100, 10))


def test_code_splits_at_top_level_definitions():
    body = "\n".join(f"    x{i} = compute({i})" for i in range(12))
    source = "\n\n".join(f"def handler_{n}():\n{body}\n    return x0" for n in range(6))
    doc = Document("svc/handlers.py", source)
    assert is_code(doc)
    chunks = chunk_document(doc, ChunkerConfig(size=120, overlap=0))
    assert len(chunks) >= 3
    assert all(c.text.startswith("def handler_") for c in chunks)
    assert chunks[0].metadata["chunker"] == "code"


def test_word_level_fallback_for_one_long_line():
    doc = Document("blob.txt", " ".join(f"w{i}" for i in range(300)))
    chunks = chunk_document(doc, ChunkerConfig(size=100, overlap=10))
    assert all(count_tokens(c.text) <= 100 for c in chunks)
    assert chunks[-1].text.endswith("w299")


@pytest.mark.parametrize("size, overlap", [(8, 0), (100, 60), (100, -1)])
def test_bad_config_is_rejected(size, overlap):
    with pytest.raises(RagkitError):
        ChunkerConfig(size, overlap)


# ------------------------------------------------------------------ MaxP windows


def assert_windows_cover(text: str, size: int, stride: int, **budget) -> list[str]:
    """Every window has at most `size` tokens and every token lies in some window."""
    spans = window_spans(text, size, stride, **budget)
    assert [text[a:b] for a, b in spans] == windows(text, size, stride, **budget)
    assert all(count_tokens(text[a:b]) <= size for a, b in spans)
    starts = [m.start() for m in TOKEN.finditer(text)]
    assert all(any(a <= s < b for a, b in spans) for s in starts)
    return [text[a:b] for a, b in spans]


def test_windows_cover_long_text_and_keep_short_text_whole():
    assert windows("One. Two.", size=10) == ["One. Two."]
    assert windows("  padded line \n", size=10) == ["  padded line \n"]
    text = " ".join(f"Sentence number {i} is here." for i in range(40))
    parts = assert_windows_cover(text, size=24, stride=12)
    assert len(parts) > 5
    assert parts[0].startswith("Sentence number 0 ") and parts[-1].endswith("39 is here.")
    assert all(len(p.split()) <= 24 for p in parts)


def test_prose_windows_are_whole_sentences_stride_apart():
    text = " ".join(f"Fact {i} holds." for i in range(12))  # 4 tokens per sentence
    facts = [f"Fact {i} holds." for i in range(12)]
    assert windows(text, size=16, stride=8) == [
        " ".join(facts[i:i + 4]) for i in (0, 2, 4, 6, 8)]


def test_one_long_line_is_cut_every_stride_tokens():
    text = " ".join(f"w{i}" for i in range(400))  # one line, no punctuation: 400 tokens
    parts = assert_windows_cover(text, size=96, stride=48)
    assert parts == [" ".join(f"w{j}" for j in range(48 * i, min(48 * i + 96, 400)))
                     for i in range(8)]


def test_long_table_row_is_cut_before_cell_bars():
    row = "| " + " | ".join(f"cell {i} value" for i in range(60)) + " |"  # 241 tokens
    parts = assert_windows_cover(row, size=96, stride=48)
    cells = [f"| cell {i} value" for i in range(60)]
    assert parts == [" ".join(cells[i:i + 24]) for i in (0, 12, 24, 36)] + [
        " ".join(cells[48:]) + " |"]


def test_long_sentence_is_cut_after_commas_inside_a_normal_text():
    clause = ", ".join(f"item {i} costs {i + 5} euro" for i in range(40)) + "."  # 240 tokens
    text = f"# Prices\n\nShort intro.\n{clause}\nDone."
    parts = assert_windows_cover(text, size=96, stride=48)
    assert parts[0].startswith("# Prices")
    assert all(p.endswith((",", ".")) for p in parts)
    assert parts[-1].endswith("item 39 costs 44 euro.\nDone.")


def test_windows_over_a_model_budget_are_halved_until_they_fit():
    text = " ".join(f"Sentence number {i} is here." for i in range(40))  # 6 tokens each
    plain = windows(text, size=24, stride=12)
    triple = lambda texts: [3 * count_tokens(t) for t in texts]  # 3 model tokens per token
    assert windows(text, 24, 12, limit=72, measure=triple) == plain  # 24 tokens fit 72
    parts = assert_windows_cover(text, 24, 12, limit=40, measure=triple)
    assert all(3 * count_tokens(p) <= 40 for p in parts)
    # 12-token halves, 6 apart: every pair of neighbouring sentences, each pair once,
    # though consecutive 24-token windows share halves
    sentence = [f"Sentence number {i} is here." for i in range(40)]
    assert parts == [f"{sentence[i]} {sentence[i + 1]}" for i in range(39)]


def test_a_single_token_over_the_budget_is_kept():
    assert windows("a " * 30, 10, 5, limit=1, measure=lambda ts: [99] * len(ts)) == ["a"] * 30


def test_the_token_bound_is_never_below_the_count():
    """`most_tokens` (which lets a document skip the regex count) is an upper bound of
    `count_tokens` on 5,000 seeded random strings of words, punctuation, ASCII and
    Unicode white space (including \\x1c and U+3000), accented and Hangul letters; exact
    on a dotted name and within 40 % on prose."""
    import random

    from ragkit.chunking import count_tokens, most_tokens
    rng = random.Random(3)
    alphabet = ["word", "x", "_", "9", ".", ",", "--", "a.b.c", "é", "한국어", "東京", " ",
                "\t", "\n", "\x1c", "\u3000", "\u00a0", "(", ")", "'", "€", "🙂"]
    for _ in range(5000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        assert most_tokens(text) >= count_tokens(text), repr(text)
    assert (most_tokens("a.b"), count_tokens("a.b")) == (3, 3)  # 1 piece + 2 x 1: exact
    prose = "The report, filed in May, says revenue grew. Costs fell by 3 %. " * 20
    assert count_tokens(prose) <= most_tokens(prose) <= 1.4 * count_tokens(prose)


def test_a_chunk_opening_with_a_long_run_of_headings_reads_its_section_in_bounded_steps():
    """A document of thousands of heading lines in a row made every chunk walk to the end of
    the run (quadratic). A chunk still skips the few headings it opens with, as before."""
    from ragkit.chunking import OPENING_HEADINGS, section_of
    doc = Document("h.md", "# Guide\n\n## Setup\n\nInstall it.\n")
    assert section_of(doc, 0, "prose") == ["Guide", "Setup"]
    run = Document("run.md", "".join(f"# H{i}\n" for i in range(1000)) + "Body.\n")
    assert section_of(run, 0, "prose") == [f"H{OPENING_HEADINGS - 1}"]


def test_a_run_without_any_break_is_cut_into_chunks_of_bounded_size():
    """1 MB of hex with no space was one token, so one chunk of a million characters (and a
    200,000-token prompt for `ragkit ask --budget 8000`)."""
    from ragkit.chunking import LONGEST, most_tokens
    run = "0123456789abcdef" * 65_536  # 1 MiB, no break
    doc = Document("dump.txt", "Checksums follow.\n" + run + "\nEnd.")
    assert count_tokens(run) == len(run) // LONGEST == 8192
    assert most_tokens(doc.text) >= count_tokens(doc.text)
    chunks = chunk_document(doc, ChunkerConfig(512, 64))
    assert len(chunks) == 20 and max(len(c.text) for c in chunks) == 512 * LONGEST
    assert chunks[0].text == "Checksums follow." and chunks[-1].text.endswith("\nEnd.")
    assert all(b.start <= a.end for a, b in zip(chunks, chunks[1:]))  # every character kept
    assert count_tokens("internationalization " * 3) == 3  # ordinary words: one token each


def test_an_overlap_starts_at_a_word_and_never_inside_a_heading_line():
    """Counted back in tokens, an overlap began inside "4.2" or a word: the shipped refund
    policy's third chunk opened on ".2 Packaging", `ragkit ask` quoted ".2 Packaging" as an
    answer and the section read "4. Return shipping > 4". Every chunk after the first now
    starts at a word outside a heading line, and its section names whole headings."""
    parts = [f"### 4.{n} Packaging rule number {n}\n\nThe goods of kind {n} are packed "
             f"in a box of size {n} with paper and tape, and returned within {n} days.\n\n"
             for n in range(1, 30)]
    text = "# Returns\n\n## 4. Return shipping\n\n" + "".join(parts)
    doc = Document("policy.md", text)
    headings = {f"4.{n} Packaging rule number {n}" for n in range(1, 30)}
    for size, overlap in ((48, 16), (64, 24), (96, 32)):
        chunks = chunk_document(doc, ChunkerConfig(size, overlap))
        assert len(chunks) > 5
        for chunk in chunks[1:]:
            line = text.rfind("\n", 0, chunk.start) + 1
            assert text[chunk.start - 1].isspace(), chunk.text[:20]
            assert chunk.start == line or not text[line:].startswith("#"), chunk.text[:20]
            assert chunk.metadata["section"][-1] in headings | {"4. Return shipping"}
        assert all(b.start < a.end for a, b in zip(chunks, chunks[1:]))  # still overlapping
    data = Path(__file__).resolve().parent.parent / "data" / "corpus" / "policies" / "en"
    policy = Document("refund-policy.md", (data / "refund-policy.md").read_text())
    for chunk in chunk_document(policy):
        assert not chunk.text.startswith("."), chunk.id
        assert not any(s.endswith((" 4", " 4.")) for s in chunk.metadata["section"]), chunk.id
