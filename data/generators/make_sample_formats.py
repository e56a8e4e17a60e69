"""Render a few of the shipped corpus's Markdown documents to PDF, HTML and DOCX.

What it is: the sample collection for ragkit's PDF, HTML and Word loaders. Each document in
`DOCUMENTS` is written under OUT (default `build/sample-formats/`) as `pdf/`, `html/` and
`docx/` files keeping its corpus path (`pdf/manuals/kestrel-eg400-manual.pdf`):
- PDF (reportlab): an outline entry per heading, nested by level; the title in the PDF's
  metadata; a table row printed as one line, `| cell | cell |`, with a rule line, `| --- |`,
  under the header row (a text layer has no tables);
- HTML: `<title>`, `<h1>`-`<h6>`, `<p>`, lists and `<table>` inside a saved page's
  navigation, header, sidebar and footer boilerplate (which the loader drops);
- DOCX (python-docx): `Heading N` and list styles, real tables (the header row bold), the
  title property.
Inline `**bold**` and `` `code` `` become bold and monospace runs; their marks are not text.

How one document is read and written in each format: `_sample_writers.py` (this folder).

What it is not: a Markdown renderer — it reads the subset these documents use. Nothing it
writes is committed; `--check` (run by the data tests) renders into a temporary folder and
loads each format.

    python data/generators/make_sample_formats.py [--out build/sample-formats] [--check]
    python data/generators/make_sample_formats.py --mixed --out build/sample-formats/mixed
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _sample_writers import (Block, parse, plain, row_line, to_html,  # noqa: E402,F401
                             write_docx, write_pdf)

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "data" / "corpus"
DOCUMENTS = ("manuals/kestrel-eg400-manual.md", "policies/en/refund-policy.md",
             "policies/en/shipping-policy.md", "notes/it-onboarding-faq.md")
FORMATS = ("pdf", "html", "docx")
# The mixed folder notebook 08 reads by default: each document in one format, in turn, plus
# two files a loader must refuse (a scanned PDF without a text layer, a page of navigation only)
MIXED = ("manuals/kestrel-eg400-manual.md", "manuals/fernway-api-reference.md",
         "policies/en/refund-policy.md", "policies/en/shipping-policy.md",
         "policies/en/warranty-and-repairs-policy.md", "policies/en/travel-and-expense-policy.md",
         "policies/en/privacy-and-retention-policy.md", "notes/it-onboarding-faq.md",
         "notes/supplier-portal-faq.md", "notes/ops-sync-2025-03-12.md",
         "reports/northwind-2025-q2.md", "reports/cedarline-2024-q3.md")


def render(out: Path, documents: tuple[str, ...] = DOCUMENTS) -> list[Path]:
    """Write every document of `documents` (corpus paths) in each format under `out`."""
    written = []
    for rel in documents:
        meta, blocks = parse((CORPUS / rel).read_text(encoding="utf-8"))
        stem = Path(rel).with_suffix("")
        html_path = out / "html" / stem.with_suffix(".html")
        html_path.parent.mkdir(parents=True, exist_ok=True)
        html_path.write_text(to_html(meta, blocks), encoding="utf-8")
        write_docx(meta, blocks, out / "docx" / stem.with_suffix(".docx"))
        write_pdf(meta, blocks, out / "pdf" / stem.with_suffix(".pdf"))
        written += [out / fmt / stem.with_suffix(f".{fmt}") for fmt in FORMATS]
    return written


def scanned_pdf(path: Path) -> Path:
    """A PDF of drawings with no text layer, as a scanner's image-only pages are."""
    from reportlab.pdfgen import canvas
    pdf_canvas = canvas.Canvas(str(path), invariant=1)
    for _ in range(2):
        pdf_canvas.rect(72, 400, 300, 200, fill=1)
        pdf_canvas.showPage()
    pdf_canvas.save()
    return path


_NAV_ONLY = ("<!DOCTYPE html>\n<html><head><title>Site map</title></head><body>\n"
             "<nav><ul><li><a href='/'>Home</a></li><li><a href='/policies'>Policies</a></li>"
             "</ul></nav>\n</body></html>\n")


def render_mixed(out: Path, documents: tuple[str, ...] = MIXED) -> list[Path]:
    """Write `documents` under `out` each in one format, PDF, HTML and DOCX in turn, keeping
    its corpus path, then `scanned/scan.pdf` (no text layer) and `web/site-map.html` (no
    body text): a folder like a user's, with two files `ragkit index --skip-bad` leaves out."""
    written = []
    for n, rel in enumerate(documents):
        meta, blocks = parse((CORPUS / rel).read_text(encoding="utf-8"))
        fmt = FORMATS[n % len(FORMATS)]
        path = out / Path(rel).with_suffix(f".{fmt}")
        path.parent.mkdir(parents=True, exist_ok=True)
        if fmt == "html":
            path.write_text(to_html(meta, blocks), encoding="utf-8")
        else:
            (write_pdf if fmt == "pdf" else write_docx)(meta, blocks, path)
        written.append(path)
    for path in (out / "scanned" / "scan.pdf", out / "web" / "site-map.html"):
        path.parent.mkdir(parents=True, exist_ok=True)
    scanned_pdf(out / "scanned" / "scan.pdf")
    (out / "web" / "site-map.html").write_text(_NAV_ONLY, encoding="utf-8")
    return written + [out / "scanned" / "scan.pdf", out / "web" / "site-map.html"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=ROOT / "build" / "sample-formats")
    ap.add_argument("--mixed", action="store_true",
                    help="write the mixed folder (each document in one format, two bad files)")
    ap.add_argument("--check", action="store_true",
                    help="render into a temporary folder and check each file loads")
    args = ap.parse_args(argv)
    if args.check:
        from ragkit.document_folder import load_folder
        with tempfile.TemporaryDirectory() as tmp:
            files = render(Path(tmp))
            for fmt in FORMATS:
                load_folder(Path(tmp) / fmt)
            files += render_mixed(Path(tmp) / "mixed")
            loaded = load_folder(Path(tmp) / "mixed", skip_bad=True, progress=False)
            if len(loaded) != len(MIXED) or len(loaded.skipped) != 2:
                raise SystemExit(f"the mixed folder loaded {len(loaded)} documents and skipped "
                                 f"{len(loaded.skipped)} (expected {len(MIXED)} and 2)")
        print(f"checked {len(files)} file(s): rendered and loaded")
        return 0
    files = render_mixed(args.out) if args.mixed else render(args.out)
    print(f"wrote {len(files)} file(s) under {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
