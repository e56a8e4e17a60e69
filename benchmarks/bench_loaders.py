"""Loading PDFs: 1,000 pages through `ragkit.document_folder.load_folder` against pdfminer.six
used directly (the wrapper's overhead), with pypdf as a reference when it is installed.

Run:  PYTHONPATH=. python benchmarks/bench_loaders.py [--pages 1000] [--files 10] [--repeat 2]

The PDFs are generated here (`data/generators/make_sample_formats.py`'s PDF writer: an
outline entry per heading, Vera fonts): the shipped corpus's English Markdown documents
(reports, manuals, policies) one after another until `--pages` pages, cut into `--files`
files, as a user's folder of reports would be. Timed, best of `--repeat`, CPU seconds of
this process:
- ragkit: `load_folder(folder, jobs=1)` — text boxes, outline headings placed in the text,
  the page map, the size check of every stream pdfminer decodes — in this process;
- pdfminer: `pdfminer.high_level.extract_text(file)` on each file — the same layout
  analysis (default LAParams), nothing else;
- pypdf (if installed; not a ragkit dependency): `PdfReader(file).pages[n].extract_text()`.
The ratio ragkit / pdfminer is the wrapper's overhead. The words each one read are counted
(all three should read the same). Then the wall time of `load_folder(folder)` as a user
calls it: the files read by one worker process per core.

Measured 3 December 2026 on the 2-core development machine, other jobs running (load
average 1.5-9; four runs, one of 980 pages): 1,016 pages in 10 files (3.4 MB), every word
read by all three.
ragkit in one process 26.7-29.8 CPU s (26-29 ms a page), pdfminer directly 24.3-26.4 s: the
wrapper costs 1.02x-1.23x the library's time (1.06x in two runs; the spread is the load).
pypdf 4.3-4.7 s, pdfminer 5.6x its time: the price of pdfminer's paragraphs. Wall time with
the default two workers: 17-19 s against 24 s in one process at load average 1.5, no gain
(28 against 24 s) at load average 4-5, when other jobs hold the second core. Again after
every stream got its size check (`ragkit.loaders.pdf_streams`), idle machine: 27.1 against
22.0 CPU s (1.23x), 14.1 s wall with two workers against 26.9 s in one process.

Markdown's underlined headings (`--markdown`):

    PYTHONPATH=. python benchmarks/bench_loaders.py --markdown [--mb 6] [--repeat 2]

Three files of about `--mb` MB each: the same English documents, front matter off,
paragraphs wrapped at 72 columns, one after another, as "rules" (a `---` thematic break
between two documents, `#` headings) and "underlined" (each `#` / `##` heading written over
`===` / `---`: heading-dense); and "short sections" (`Part n` over `----` and one sentence,
30 characters a section). Timed, best of `--repeat`, CPU seconds of
`ragkit.loaders.setext.setext_headings` against the previous reading (markdown-it-py over the
whole text at once, kept below as `previous`) in the same run, both texts compared; then the
peak RSS of each in a fresh process, with that of a process that only reads the file as the
floor.

Measured 5 December 2026 (`--mb 6`, load average 8 on the 2-core machine), every text the
same both ways: rules 6.0 MB, 0.07 CPU s in parts against 1.19 s whole (0.06x), peak RSS
39 MB against 132 MB (the file alone: 39 MB); underlined 6.2 MB, 10,638 headings, 0.59 s
against 1.23 s (0.48x), 53 MB against 137 MB; short sections 5.9 MB, 209,715 headings,
5.40 s against 7.15 s (0.76x), 74 MB against 638 MB (0.12x). Where the headings are dense,
markdown-it-py still reads nearly every line: the parts save its memory, not its time.
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "data" / "generators"))

from make_sample_formats import CORPUS, parse, write_pdf  # noqa: E402
from markdown_it import MarkdownIt  # noqa: E402

from ragkit.document_folder import load_folder  # noqa: E402
from ragkit.jobs import usable_cores  # noqa: E402
from ragkit.loaders.front_matter import split_front_matter  # noqa: E402
from ragkit.loaders.setext import setext_headings  # noqa: E402


def _blocks_for(pages: int, files: int) -> list[list]:
    """Blocks of the corpus's English documents, repeated, cut into `files` parts of about
    `pages / files` pages each (a page holds ~3,000 characters of the Markdown source)."""
    sources = sorted(p for part in ("reports", "manuals", "policies/en")
                     for p in (CORPUS / part).glob("*.md"))
    per_file = pages / files * 3100
    parts, current, size, n = [], [], 0, 0
    while len(parts) < files:
        meta, blocks = parse(sources[n % len(sources)].read_text(encoding="utf-8"))
        n += 1
        for block in blocks:
            current.append(block)
            size += len(block.text) + sum(map(len, block.cells)) + 40
        if size >= per_file:
            parts.append(current)
            current, size = [], 0
    return parts


def _page_count(path: Path) -> int:
    from pdfminer.pdfdocument import PDFDocument
    from pdfminer.pdfpage import PDFPage
    from pdfminer.pdfparser import PDFParser
    with path.open("rb") as handle:
        return sum(1 for _ in PDFPage.create_pages(PDFDocument(PDFParser(handle))))


def _best(repeat: int, run) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeat):
        start = time.process_time()
        out = run()
        best = min(best, time.process_time() - start)
    return best, out


def previous(text: str) -> str:
    """`setext_headings` before it read parts: markdown-it-py over the whole text at once."""
    tokens = MarkdownIt("commonmark").enable("table").disable(["inline", "text_join"]).parse(
        text)
    lines = text.split("\n")
    out: list[str] = []
    at = 0
    for opened, inline in zip(tokens, tokens[1:]):
        if (opened.type != "heading_open" or opened.level != 0 or opened.markup not in ("=", "-")
                or not opened.map or inline.content.startswith("|")):
            continue
        start, end = opened.map
        if opened.markup == "-" and (end - start > 2 or lines[end - 2].rstrip().endswith(
                (".", "。"))):
            continue
        out.extend(lines[at:start])
        heading = " ".join(line.strip() for line in lines[start:end - 1])
        out.append(("#" if opened.markup == "=" else "##") + " " + heading)
        at = end
    if not at:
        return text
    out.extend(lines[at:])
    return "\n".join(out)


def _wrapped(text: str) -> str:
    """`text` with its paragraphs wrapped at 72 columns, as Markdown is often written."""
    return "\n\n".join(textwrap.fill(block, 72) if block[:1].isalnum() and "\n" not in block
                       else block for block in text.split("\n\n"))


def _markdown_files(folder: Path, mb: float) -> list[Path]:
    """The three files of `--markdown` (module docstring), about `mb` MB each."""
    docs = [_wrapped(split_front_matter(p.read_text(encoding="utf-8"))[1])
            for part in ("reports", "manuals", "policies/en", "notes")
            for p in sorted((CORPUS / part).glob("*.md"))]
    size = int(mb * 2**20)
    rules, n = [], 0
    while sum(map(len, rules)) < size:
        rules.append(docs[n % len(docs)])
        n += 1
    underlined = re.sub(r"^(#{1,2}) (.+)$", lambda m: m.group(2) + "\n" + (
        "=" if m.group(1) == "#" else "-") * max(3, len(m.group(2))), "\n\n".join(rules),
        flags=re.M)
    sections = "".join(f"Part {n}\n----\nShort text.\n\n" for n in range(size // 30))
    files = []
    for name, text in (("rules", "\n\n---\n\n".join(rules)), ("underlined", underlined),
                       ("short sections", sections)):
        files.append(folder / f"{name.replace(' ', '-')}.md")
        files[-1].write_text(text, encoding="utf-8")
    return files


# the high-water mark of the process's memory (VmHWM: ru_maxrss would carry the parent's over)
_PEAK = """import sys
from pathlib import Path
sys.path.insert(0, "benchmarks")
import bench_loaders
text = Path(sys.argv[2]).read_text(encoding="utf-8")
if sys.argv[1] != "read":
    (bench_loaders.setext_headings if sys.argv[1] == "parts" else bench_loaders.previous)(text)
print(next(line.split()[1] for line in open("/proc/self/status") if line.startswith("VmHWM")))
"""


def _peak_mb(how: str, path: Path) -> float:
    """Peak RSS (MB) of a fresh process that reads `path` and runs `how` on it."""
    done = subprocess.run([sys.executable, "-c", _PEAK, how, str(path)], cwd=ROOT,
                          capture_output=True, text=True, check=True)
    return int(done.stdout) / 1024


def markdown(mb: float, repeat: int) -> int:
    """`--markdown`: underlined headings read in parts against the whole text at once."""
    with tempfile.TemporaryDirectory() as tmp:
        for path in _markdown_files(Path(tmp), mb):
            text = path.read_text(encoding="utf-8")
            parts_s, new = _best(repeat, lambda: setext_headings(text))
            whole_s, old = _best(repeat, lambda: previous(text))
            headings = len(re.findall(r"^#{1,2} ", new, re.M)) - len(
                re.findall(r"^#{1,2} ", text, re.M))
            print(f"{path.stem:15} {len(text) / 2**20:4.1f} MB  {headings:7,} underlined headings"
                  f"  parts {parts_s:5.2f} CPU s  whole {whole_s:5.2f} s  "
                  f"({parts_s / whole_s:.2f}x; {parts_s / len(text) * 2**20:.2f} s/MB)  "
                  f"{'same text' if new == old else 'TEXTS DIFFER'}")
            floor, parts_mb, whole_mb = (_peak_mb(how, path) for how in ("read", "parts",
                                                                         "whole"))
            print(f"{'':15} peak RSS: parts {parts_mb:4.0f} MB, whole {whole_mb:4.0f} MB "
                  f"({parts_mb / whole_mb:.2f}x), reading the file alone {floor:.0f} MB")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pages", type=int, default=1000)
    ap.add_argument("--files", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--markdown", action="store_true",
                    help="time underlined Markdown headings instead of PDFs")
    ap.add_argument("--mb", type=float, default=6, help="size of each --markdown file")
    args = ap.parse_args(argv)
    if args.markdown:
        return markdown(args.mb, args.repeat)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "pdfs"
        start = time.perf_counter()
        for n, blocks in enumerate(_blocks_for(args.pages, args.files)):
            write_pdf({"title": f"Corpus part {n + 1}"}, blocks, folder / f"part-{n:02d}.pdf")
        files = sorted(folder.glob("*.pdf"))
        pages = sum(_page_count(f) for f in files)
        print(f"generated {pages} pages in {len(files)} PDFs "
              f"({sum(f.stat().st_size for f in files) / 2**20:.1f} MB) in "
              f"{time.perf_counter() - start:.1f} s")

        ragkit_s, docs = _best(args.repeat, lambda: load_folder(folder, progress=False,
                                                                jobs=1))
        ragkit_words = sum(len(d.text.replace("#", " ").split()) for d in docs)
        print(f"ragkit load_folder: {ragkit_s:6.2f} CPU s  {1000 * ragkit_s / pages:5.1f} ms/page"
              f"  {ragkit_words:,} words, {sum(len(d.metadata['pages']) for d in docs)} pages "
              f"mapped")

        from pdfminer.high_level import extract_text
        direct_s, texts = _best(args.repeat, lambda: [extract_text(f) for f in files])
        direct_words = sum(len(t.split()) for t in texts)
        print(f"pdfminer direct   : {direct_s:6.2f} CPU s  {1000 * direct_s / pages:5.1f} ms/page"
              f"  {direct_words:,} words")
        print(f"wrapper overhead  : {ragkit_s / direct_s:.2f}x pdfminer's time")
        walls: dict[int | None, list[float]] = {1: [], None: []}
        for _ in range(args.repeat):  # interleaved: both see the same load from other jobs
            for jobs in walls:
                start = time.perf_counter()
                load_folder(folder, progress=False, jobs=jobs)
                walls[jobs].append(time.perf_counter() - start)
        print(f"wall time         : {min(walls[None]):6.2f} s with the default workers (one "
              f"a core, {usable_cores()} here), {min(walls[1]):.2f} s in one process")
        try:
            from pypdf import PdfReader
        except ImportError:
            print("pypdf             : not installed (reference only)")
            return 0
        pypdf_s, texts = _best(args.repeat, lambda: [
            "\n".join(p.extract_text() for p in PdfReader(f).pages) for f in files])
        print(f"pypdf (reference) : {pypdf_s:6.2f} CPU s  {1000 * pypdf_s / pages:5.1f} ms/page"
              f"  {sum(len(t.split()) for t in texts):,} words "
              f"(pdfminer {direct_s / pypdf_s:.1f}x its time)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
