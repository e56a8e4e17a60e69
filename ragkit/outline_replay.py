"""One pattern's whole-text matches replayed as a scan of `text[:offset]` would see them:
the machinery under `ragkit.outline` (whose module docstring says why and how).

What it is: `scan`, the plain rescan of a stretch of text (`push` each match onto a heading
or definition stack), and `Replay`, which scans a document once and answers the stack at
any offset by a bisection and a short rescan. What it is not: the patterns or their labels
(`ragkit.outline`).
"""
from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable

Stack = list[tuple[int, str]]  # (level or indent, label), outermost first


def push(stack: Stack, key: int, label: str) -> None:
    """Close what `key` closes (entries at its level or deeper), then open it."""
    while stack and stack[-1][0] >= key:
        stack.pop()
    stack.append((key, label))


def scan(pattern: re.Pattern, entry: Callable[[re.Match], tuple[int, str]], text: str,
         start: int, end: int, stack: Stack) -> Stack:
    """`stack` after each match of `pattern` in text[start:end] (the text cut at `end`)."""
    for match in pattern.finditer(text, start, end):
        push(stack, *entry(match))
    return stack


class Replay:
    """One pattern's whole-text matches, replayed as a scan of `text[:offset]` would see them."""

    def __init__(self, text: str, newlines: list[int], pattern: re.Pattern,
                 entry: Callable[[re.Match], tuple[int, str]], lines: re.Pattern,
                 reach: re.Pattern, slack: int) -> None:
        self.text, self.newlines, self.pattern, self.entry = text, newlines, pattern, entry
        self._reach, self.slack = reach, slack
        self.starts: list[int] = []
        self.ends: list[int] = []
        self.items: list[tuple[int, str]] = []
        self.parents: list[int] = []
        open_: list[int] = []  # indices of the matches on the stack, keys increasing
        for match in pattern.finditer(text):
            key, label = entry(match)
            while open_ and self.items[open_[-1]][0] >= key:
                open_.pop()
            self.parents.append(open_[-1] if open_ else -1)
            open_.append(len(self.items))
            self.starts.append(match.start())
            self.ends.append(match.end())
            self.items.append((key, label))
        # the line starts an attempt can match at (`lines`), each with its reach; those whose
        # attempt may read past their own line, with the running maximum of what they read
        # (non-decreasing, so the first one reaching an offset bisects)
        self.reached: dict[int, int] = {}
        self.far: list[int] = []
        self.far_reach: list[int] = []
        for line in lines.finditer(text):
            q = line.start()
            r = self.reached[q] = self.reach(q)
            if r > self.line_end(q) + 1:
                self.far.append(q)
                self.far_reach.append(max(r, self.far_reach[-1] if self.far_reach else 0))
        self.tries = list(self.reached)  # ascending

    def reach(self, q: int) -> int:
        """An exclusive bound of the positions the attempt at line start `q` reads."""
        return self._reach.match(self.text, q).end() + self.slack

    def line_end(self, q: int) -> int:
        i = bisect_left(self.newlines, q)
        return self.newlines[i] if i < len(self.newlines) else len(self.text)

    def stack(self, offset: int, line_start: int) -> Stack:
        """The stack a scan of `text[:offset]` ends with; `line_start` is offset's line's."""
        chain, resume = self.cut(offset, line_start)
        return self.rescan(chain, resume, offset)

    def rescan(self, chain: Stack, resume: int, offset: int) -> Stack:
        """`chain` after each match a scan of `text[resume:offset]` finds, trying only the
        line starts an attempt can match at (`reached`): scanning every position, each chunk
        of a long line rescanned it from its start (a 4 MB paragraph under a heading took
        22 s to index, 8 MB 89 s)."""
        tries, at = self.tries, resume
        for i in range(bisect_left(tries, resume), len(tries)):
            if tries[i] >= offset:
                break
            if tries[i] >= at and (match := self.pattern.match(self.text, tries[i], offset)):
                push(chain, *self.entry(match))
                at = match.end()
        return chain

    def cut(self, offset: int, line_start: int) -> tuple[Stack, int]:
        """The stack of the whole-text matches a scan of `text[:offset]` shares, and where
        that scan must go on, cut at `offset`, to end as it does (`stack`)."""
        first = offset  # the first line start whose attempt may read at or past offset
        i = bisect_right(self.far_reach, offset)
        if i < len(self.far) and self.far[i] < offset:
            first = self.far[i]
        if line_start < first and self.reached.get(line_start, 0) > offset:
            first = line_start  # its attempt may read past offset (no attempt: no line)
        top = bisect_left(self.starts, first) - 1  # the last match that reads before offset
        chain: Stack = []
        resume = first
        if top >= 0:
            resume = max(first, self.ends[top])
            node = top
            while node >= 0:
                chain.append(self.items[node])
                node = self.parents[node]
            chain.reverse()
        return chain, resume
