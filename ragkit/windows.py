"""Overlapping windows of a chunk for a dense embedder with a short input (MaxP scoring).

What it is: `windows` / `window_spans` cut a chunk's text into windows of at most `size`
chunker tokens (`ragkit.chunking.TOKEN`), at sentence or line ends, about `stride` tokens
apart; every token of the chunk lands in some window. With the embedder's `measure` and
`limit`, a window still too long for the model is halved until it fits. `ragkit.dense`
embeds each window and scores a chunk by its best one (Dai & Callan, SIGIR 2019).

What it is not: a chunker (`ragkit.chunking` makes the chunks these windows cover) nor a
model tokenizer (the model's token counts come in through `measure`).
"""
from __future__ import annotations

import re

from ragkit.chunking import Measure, Tokens, count_tokens, split_pieces, trim

# Window boundaries: a sentence end or a line end (the white space between is dropped).
WINDOW_SEGMENT = re.compile(r"(?<=[.!?。])\s+|\n+")
# Finer cut points inside a sentence or line longer than a window, coarsest first.
WINDOW_SEPARATORS = (
    re.compile(r"(?<=[。！？])"),                  # a CJK sentence end (no space after it)
    re.compile(r"(?=\|)"),                        # before a table-cell bar
    re.compile(r"[,;，；、]\s*"),                  # after a comma or semicolon
)


def window_spans(text: str, size: int = 96, stride: int = 48, *, limit: int | None = None,
                 measure: Measure | None = None) -> list[tuple[int, int]]:
    """(start, end) offsets of `windows(text, size, stride, ...)`; see there."""
    spans = _token_windows(text, size, stride)
    if measure is None or limit is None:
        return spans
    return list(dict.fromkeys(_fit(text, spans, limit, measure)))  # drop repeated halves


def windows(text: str, size: int = 96, stride: int = 48, *, limit: int | None = None,
            measure: Measure | None = None) -> list[str]:
    """Overlapping windows of at most `size` chunker tokens, cut at sentence or line ends,
    each starting about `stride` tokens after the previous one.

    A text of at most `size` tokens is its own single window. A sentence or line longer
    than `size` is split too: at CJK full stops, then before table-cell bars `|`, then
    after commas and semicolons, and last every `stride` tokens (so its windows are `size`
    tokens long, `stride` apart). The windows cover every token of the text.

    With `measure` (texts -> their lengths in the embedder's tokens, e.g. a function adding
    the chunk's context to each window and calling the embedder's `token_lengths`) and
    `limit` (its `max_tokens`), a window measuring more than `limit` is cut again into
    windows half as long, until each fits or is a single chunker token (Korean text has
    ~4 MiniLM word-pieces per chunker token, English ~1). Repeated halves are kept once.
    Windows give MaxP its passages (Dai & Callan, SIGIR 2019).
    """
    spans = window_spans(text, size, stride, limit=limit, measure=measure)
    return [text[start:end] for start, end in spans]


def _token_windows(text: str, size: int, stride: int) -> list[tuple[int, int]]:
    """Windows of at most `size` chunker tokens over whole segments (`_window_segments`)."""
    tokens = Tokens(text)
    if len(tokens.starts) <= size:
        return [(0, len(text))]
    segments = _window_segments(text, tokens, size, max(1, min(stride, size)))
    out, first = [], 0
    while first < len(segments):
        last, total = first, 0
        while last < len(segments) and (total + segments[last][2] <= size or last == first):
            total += segments[last][2]
            last += 1
        out.append((segments[first][0], segments[last - 1][1]))
        if last == len(segments):
            break
        advanced, step = first, 0
        while advanced < last - 1 and step < stride:
            step += segments[advanced][2]
            advanced += 1
        first = max(advanced, first + 1)
    return out


def _fit(text: str, spans: list[tuple[int, int]], limit: int, measure: Measure
         ) -> list[tuple[int, int]]:
    """`spans`, each one that `measure`s over `limit` replaced by half-size windows of it."""
    out: list[tuple[int, int]] = []
    for (a, b), length in zip(spans, measure([text[a:b] for a, b in spans])):
        n = count_tokens(text[a:b])
        if length <= limit or n <= 1:
            out.append((a, b))
            continue
        half = (n + 1) // 2
        inner = _token_windows(text[a:b], half, max(1, half // 2))
        out.extend(_fit(text, [(a + lo, a + hi) for lo, hi in inner], limit, measure))
    return out


def _window_segments(text: str, tokens: Tokens, size: int, hard: int
                     ) -> list[tuple[int, int, int]]:
    """(start, end, tokens) of each sentence or line, those over `size` tokens split
    further (`WINDOW_SEPARATORS`, then every `hard` tokens) and trimmed of white space."""
    spans, start = [], 0
    for match in WINDOW_SEGMENT.finditer(text):
        spans.append((start, match.start()))
        start = match.end()
    spans.append((start, len(text)))
    out = []
    for a, b in spans:
        if b <= a:
            continue
        if tokens.count(a, b) <= size:
            out.append((a, b, tokens.count(a, b)))
            continue
        for lo, hi in split_pieces(text, a, b, tokens, size, WINDOW_SEPARATORS, hard):
            lo, hi = trim(text, lo, hi)
            if lo < hi:
                out.append((lo, hi, tokens.count(lo, hi)))
    return out
