"""pdfminer's layout of one PDF page, bounded: a hostile page cannot run for minutes.

What it is: `page_device(resources, path, reading)` — the `PDFPageAggregator` the PDF
loader lays pages out with (`LAParams(all_texts=True)`), which

- refuses a page that draws more than `MAX_PAGE_CHARS` characters, as it draws them (one
  line naming the file and page): a dense page of small print draws ~10,000; a 3.5 MB file
  of 600,000 one-word text objects on one page had used 3.5 GB when it was stopped;
- lays a page with more than `MAX_RUNS` runs of text (a run: characters set one after the
  other on a line; a page of prose has one or two per line, ~50–500 a page) as one box per
  text line, in plain top-to-bottom, left-to-right order (`boxes_flow=None`), without
  pdfminer's grouping of lines into paragraphs and of boxes into a tree. The tree compares
  every pair of boxes and recurses once per level: 4,000 scattered words on one page (a
  23 KB file) took 99 s and then overflowed the stack, read as "not a valid PDF"; and
  words that overlap make the line grouping re-add every line at each merge (8,000 took
  117 s in it alone). Laid out this way, 15,000 took 385 s before and now take seconds.

What it is not: a change to ordinary pages, which keep pdfminer's full layout analysis.
"""
from __future__ import annotations

from pathlib import Path

from ragkit.documents import RagkitError

MAX_PAGE_CHARS = 200_000  # characters one page may draw
MAX_RUNS = 1_500  # runs of text past which a page is laid out without box grouping


def _runs(container) -> int:
    """How many runs of text `container` (a laid-out page or figure, before analysis)
    draws: a character starts a run unless it sits on the line of the one before, at most
    three of its widths to the right."""
    from pdfminer.layout import LTChar, LTFigure
    runs, last = 0, None
    for item in container:
        if isinstance(item, LTFigure):
            runs, last = runs + _runs(item), None
        elif isinstance(item, LTChar):
            width = max(item.width, 1.0)
            if (last is None or abs(item.y0 - last.y0) > max(item.height, 1.0) / 2
                    or not -width <= item.x0 - last.x1 <= 3 * width):
                runs += 1
            last = item
    return runs


def _one_box_per_line(container) -> None:
    """Make `container` (and the figures in it) group no lines into paragraphs: each line
    becomes its own text box, in linear time."""
    from pdfminer.layout import LTFigure, LTTextBoxHorizontal, LTTextBoxVertical
    from pdfminer.layout import LTTextLineHorizontal

    def group_textlines(laparams, lines):
        for line in lines:
            box = (LTTextBoxHorizontal() if isinstance(line, LTTextLineHorizontal)
                   else LTTextBoxVertical())
            box.add(line)
            yield box
    container.group_textlines = group_textlines
    for item in container:
        if isinstance(item, LTFigure):
            _one_box_per_line(item)


def page_device(resources, path: Path, reading):
    """The aggregator described in the module docstring; `reading.page` names the page."""
    from pdfminer.converter import PDFPageAggregator
    from pdfminer.layout import LAParams

    full, flat = LAParams(all_texts=True), LAParams(all_texts=True, boxes_flow=None)

    class Bounded(PDFPageAggregator):
        chars = 0

        def begin_page(self, page, ctm) -> None:
            self.chars = 0
            super().begin_page(page, ctm)

        def render_char(self, *args, **kwargs) -> float:
            self.chars += 1
            if self.chars > MAX_PAGE_CHARS:
                raise RagkitError(f"{path}: page {reading.page} draws more than "
                                  f"{MAX_PAGE_CHARS:,} characters (a hostile file?)")
            return super().render_char(*args, **kwargs)

        def end_page(self, page) -> None:
            self.laparams = full
            if _runs(self.cur_item) > MAX_RUNS:
                self.laparams = flat
                _one_box_per_line(self.cur_item)
            super().end_page(page)

    return Bounded(resources, laparams=full)
