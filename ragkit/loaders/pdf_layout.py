"""pdfminer's layout of one PDF page, bounded: a hostile page cannot run for minutes.

What it is: `page_device(resources, path, reading)` — the `PDFPageAggregator` the PDF
loader lays pages out with (`LAParams(all_texts=True)`), which

- refuses a page that draws more than `MAX_PAGE_CHARS` characters, as it draws them (one
  line naming the file and page): a dense page of small print draws ~10,000; a 3.5 MB file
  of 600,000 one-word text objects on one page had used 3.5 GB when it was stopped;
- lays a page with more than `MAX_RUNS` runs of text (a run: characters pdfminer sets on
  one line; a page of prose has one or two per line, ~50–150 a page, a table one a cell),
  and any page of more than `COSTLY` once the file's such pages have cost `BUDGET`, as one
  box per text line, in plain top-to-bottom, left-to-right order (`boxes_flow=None`), without
  pdfminer's grouping of lines into paragraphs and of boxes into a tree. The tree compares
  every pair of boxes and recurses once per level: 4,000 scattered words on one page (a
  23 KB file) took 99 s and then overflowed the stack, read as "not a valid PDF"; and
  words that overlap make the line grouping re-add every line at each merge (8,000 took
  117 s in it alone). Laid out this way, 15,000 took 385 s before and now take seconds.

Paths and images are counted, never laid out (ragkit reads text only): a page that draws
more than `MAX_PAGE_SHAPES` is read only that far (`DrawnTooMuch`), a file that draws more
than `MAX_FILE_SHAPES`, or a path of more than `MAX_PATH_SEGMENTS` segments, is refused (a
51 KB file of 2 million rectangles took 85 s and 3.7 GB).
The file as a whole is bounded too (`page_interpreter`): at most `MAX_FILE_CHARS` characters
drawn, `MAX_STREAM_RUNS` content streams run, `MAX_CONTENT_BYTES` of them run once and
`MAX_REPEATED_BYTES` run again. pdfminer runs a stream each time a page or form uses it, at
about 2 µs a byte: 10 pages sharing one 4 MB stream of no-op operators (a 6 KB file) took
158 s, and a 2.9 KB file drawing each form 4 times, 11 levels deep, 224 s and 2.9 GB. A logo
form on each of 1,000 pages repeats a few MB; a book's own pages are each run once.

Ordinary pages keep pdfminer's full layout analysis, made deterministic: its ties between
boxes equally far apart are broken in the boxes' order, not by memory address (`_stable_tree`).

What it is not: a change to what the analysis does on ordinary pages.
"""
from __future__ import annotations

from pathlib import Path

from ragkit.documents import RagkitError

MAX_PAGE_CHARS = 200_000  # characters one page may draw
MAX_FILE_CHARS = 10_000_000  # characters a whole file may draw (~3,000 pages of prose)
MAX_CONTENT_BYTES = 256 * 2**20  # content-stream bytes a file may have run, each once
MAX_REPEATED_BYTES = 16 * 2**20  # bytes of streams run again (a shared page stream, a form)
MAX_STREAM_RUNS = 100_000  # content streams (pages and form draws) a file may run
# paths and images a page is read up to, and a file may draw: a page of a technical manual
# draws hundreds, a detailed map some tens of thousands; each costs pdfminer 20-90 µs unkept
MAX_PAGE_SHAPES, MAX_FILE_SHAPES = 200_000, 5_000_000
# segments of one path not yet drawn (`m`, `l`, `re`, … with no `f` or `S` after them): a
# hostile stream's 20 million rectangles held as one path would take gigabytes
MAX_PATH_SEGMENTS = 1_000_000
MAX_RUNS = 400  # runs of text past which a page is laid out without box grouping
# pdfminer's grouping costs about the square of a page's runs: past this sum of squares over
# a file's pages of more than `COSTLY` runs, later such pages are laid out as `MAX_RUNS` ones
COSTLY, BUDGET = 200, 600_000


class DrawnTooMuch(Exception):
    """A page drew more than `MAX_PAGE_SHAPES` paths or images: it is laid out as far as it
    was read, and the rest of its content is not run, rather than the file refused (a heat
    map of 240,000 cells would have cost a paper all its text)."""


def _same_run(a, b) -> bool:
    """Whether pdfminer would set characters `a` and `b` on one line (its `group_objects`,
    with the default `line_overlap` 0.5 and `char_margin` 2): they overlap by half the lower
    one's height and stand closer than twice the wider one's width."""
    overlap = min(a.y1, b.y1) - max(a.y0, b.y0)
    apart = max(0.0, b.x0 - a.x1, a.x0 - b.x1)
    return overlap > 0.5 * min(a.height, b.height) and apart < 2.0 * max(a.width, b.width)


def _runs(container) -> int:
    """How many runs of text `container` (a laid-out page or figure, before analysis)
    draws: a character starts one unless pdfminer would put it on the line of the one
    before (`_same_run`)."""
    from pdfminer.layout import LTChar, LTFigure
    runs, last = 0, None
    for item in container:
        if isinstance(item, LTFigure):
            runs, last = runs + _runs(item), None
        elif isinstance(item, LTChar):
            runs += last is None or not _same_run(last, item)
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


def _stable_tree(container) -> None:
    """Make `container` (and the figures in it) group its boxes into pdfminer's tree with
    ties broken in the boxes' order. pdfminer's `group_textboxes` breaks ties between equal
    distances by `id()`, a memory address: a code listing's boxes of one width came out in
    another order on each run (pdfminer.six issue 607), so one file read differently each
    time and an index built from it was "changed" at every check. Its own code runs, with
    `id` numbering the objects in the order it first meets them."""
    import builtins
    import types

    from pdfminer.layout import LTFigure, LTLayoutContainer
    original = LTLayoutContainer.group_textboxes

    def group_textboxes(laparams, boxes):
        order: dict[int, int] = {}  # objects stay alive through the call: ids not reused
        ordered = types.FunctionType(
            original.__code__,
            {**original.__globals__,
             "id": lambda obj: order.setdefault(builtins.id(obj), len(order))},
            original.__name__, original.__defaults__, original.__closure__)
        return ordered(container, laparams, boxes)
    container.group_textboxes = group_textboxes
    for item in container:
        if isinstance(item, LTFigure):
            _stable_tree(item)


def page_device(resources, path: Path, reading):
    """The aggregator described in the module docstring; `reading.page` names the page."""
    from pdfminer.converter import PDFPageAggregator
    from pdfminer.layout import LAParams

    full, flat = LAParams(all_texts=True), LAParams(all_texts=True, boxes_flow=None)

    class Bounded(PDFPageAggregator):
        chars = file_chars = unmapped = 0  # unmapped: glyphs of no Unicode text, `(cid:N)`
        shapes = file_shapes = 0  # paths and images drawn (`paint_path`, `render_image`)
        spent = 0  # the sum of squared runs of this file's costly pages laid out in full
        interpreted = repeated = runs = 0  # what `page_interpreter` ran of this file
        relayout = False  # True while `ragkit.loaders.pdf` lays a page out again, turned
        seen: set = set()  # (object number, generation) of each stream run
        cut: set = set()  # pages read only as far as `MAX_PAGE_SHAPES` (`DrawnTooMuch`)
        where = path, reading

        def begin_page(self, page, ctm) -> None:
            self.chars = self.shapes = 0
            super().begin_page(page, ctm)

        def paint_path(self, gstate, stroke, fill, evenodd, path) -> None:
            """A drawn path is no text: counted (`_drawn`), never laid out (pdfminer's
            rectangles and curves of a page of 2 million of them held 3.7 GB)."""
            self._drawn()

        def render_image(self, name, stream) -> None:
            """An image is no text: counted (`_drawn`), not kept (300,000 inline images
            on a page held 580 MB)."""
            self._drawn()

        def _drawn(self) -> None:
            self.shapes += 1
            self.file_shapes += not self.relayout
            if self.file_shapes > MAX_FILE_SHAPES:
                raise RagkitError(f"{path}: draws more than {MAX_FILE_SHAPES:,} paths or "
                                  f"images by page {reading.page} (a hostile file?)")
            if self.shapes > MAX_PAGE_SHAPES:
                raise DrawnTooMuch  # the page is read as far as here (`ragkit.loaders.pdf`)

        def render_char(self, *args, **kwargs) -> float:
            self.chars += 1
            self.file_chars += not self.relayout  # a page laid out again: counted once
            if self.chars > MAX_PAGE_CHARS:
                raise RagkitError(f"{path}: page {reading.page} draws more than "
                                  f"{MAX_PAGE_CHARS:,} characters (a hostile file?)")
            if self.file_chars > MAX_FILE_CHARS:
                raise RagkitError(f"{path}: draws more than {MAX_FILE_CHARS:,} characters by "
                                  f"page {reading.page} (a hostile file?)")
            return super().render_char(*args, **kwargs)

        def handle_undefined_char(self, font, cid: int) -> str:
            self.unmapped += not self.relayout
            return super().handle_undefined_char(font, cid)

        def end_page(self, page) -> None:
            self.laparams, runs = full, _runs(self.cur_item)
            if runs > COSTLY:
                self.spent += runs * runs
            if runs > MAX_RUNS or (runs > COSTLY and self.spent > BUDGET):
                self.laparams = flat
                _one_box_per_line(self.cur_item)
            else:
                _stable_tree(self.cur_item)
            super().end_page(page)

    return Bounded(resources, laparams=full)


def page_interpreter(resources, device):
    """pdfminer's page interpreter over `device` (`page_device`'s), counting every content
    stream it runs — a page's, or a form's each time it is drawn — and refusing the file past
    `MAX_STREAM_RUNS`, `MAX_CONTENT_BYTES` or `MAX_REPEATED_BYTES` (one line naming the file
    and page); a page laid out again, turned (`device.relayout`), is not counted again."""
    from pdfminer.pdfinterp import PDFPageInterpreter
    from pdfminer.pdftypes import stream_value

    class Counted(PDFPageInterpreter):
        # path operators, each checking the path it grows (pdfminer calls an operator with
        # as many operands as its method names: `*args` would get none)
        def do_m(self, x, y) -> None:
            super().do_m(x, y)
            self._grown()

        def do_l(self, x, y) -> None:
            super().do_l(x, y)
            self._grown()

        def do_c(self, x1, y1, x2, y2, x3, y3) -> None:
            super().do_c(x1, y1, x2, y2, x3, y3)
            self._grown()

        def do_v(self, x2, y2, x3, y3) -> None:
            super().do_v(x2, y2, x3, y3)
            self._grown()

        def do_y(self, x1, y1, x3, y3) -> None:
            super().do_y(x1, y1, x3, y3)
            self._grown()

        def do_re(self, x, y, w, h) -> None:
            super().do_re(x, y, w, h)
            self._grown()

        def do_h(self) -> None:
            super().do_h()
            self._grown()

        def _grown(self) -> None:
            if len(self.curpath) > MAX_PATH_SEGMENTS:
                path, reading = device.where
                raise RagkitError(f"{path}: page {reading.page} builds a path of more than "
                                  f"{MAX_PATH_SEGMENTS:,} segments (a hostile file?)")

        def execute(self, streams) -> None:
            if device.relayout:  # the loader laying a page out again, turned: its cost is
                return super().execute(streams)  # bounded by the page's first run
            device.runs += 1
            for obj in streams:
                try:
                    stream = stream_value(obj)
                    size = len(stream.get_data())
                except Exception:  # not a stream: pdfminer's own execute skips or says so
                    continue
                again = (stream.objid, stream.genno) in device.seen
                device.seen.add((stream.objid, stream.genno))
                device.repeated += size if again else 0
                device.interpreted += 0 if again else size
            if (device.interpreted > MAX_CONTENT_BYTES or device.runs > MAX_STREAM_RUNS
                    or device.repeated > MAX_REPEATED_BYTES):
                path, reading = device.where
                raise RagkitError(f"{path}: page {reading.page} runs content streams past a "
                                  f"bound (over {MAX_STREAM_RUNS:,} streams, "
                                  f"{MAX_CONTENT_BYTES // 2**20} MB, or "
                                  f"{MAX_REPEATED_BYTES // 2**20} MB run again: pages sharing "
                                  f"one stream or forms drawn over and over, a hostile file?)")
            super().execute(streams)

    return Counted(resources, device)
