"""RankGPT's listwise reranking: its prompt, its sliding windows and its permutation repair.

What it is: the pieces of RankGPT (Sun et al., "Is ChatGPT Good at Search?", EMNLP 2023)
that do not depend on which model answers, so the Claude reranker and the offline stand-in
share one copy. Source: `sunnweiwei/RankGPT` `rank_gpt.py` (`get_prefix_prompt`,
`get_post_prompt`, `create_permutation_instruction`, `receive_permutation`,
`sliding_windows`); strings copied from commit 2a862ed, whose `sliding_windows` still starts
at `end_pos = rank_start` (a bug fixed later: the windows here end at the list's end).
- `build_messages(query, passages)`: the system prompt and the conversation, word for word:
  the "I will provide you with {num} passages…" turn, one user turn "[i] text" and one
  assistant turn "Received passage [i]." per passage, then the final instruction. Passages
  are whitespace-collapsed and cut to their first `MAX_WORDS` (300) words.
- `parse_permutation(reply, n)`: `receive_permutation`'s repair, plus what it did.
- `windows(n, size, step)`: the sliding windows, back to front.

What it is not: RankGPT's prompt-shrinking loop (it cuts passages by one more word until
the prompt fits a 4K-token model): 20 passages of 300 words are about 8-12K tokens, far
inside Claude's 200K context window, so the loop would never run.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ragkit.documents import RagkitError

MAX_WORDS = 300
SYSTEM = ("You are RankGPT, an intelligent assistant that can rank passages based on their "
          "relevancy to the query.")
PREFIX = ("I will provide you with {num} passages, each indicated by number identifier []. "
          "\nRank the passages based on their relevance to query: {query}.")
PREFIX_REPLY = "Okay, please provide the passages."
PASSAGE = "[{rank}] {content}"
RECEIVED = "Received passage [{rank}]."
POST = ("Search Query: {query}. \nRank the {num} passages above based on their relevance to "
        "the search query. The passages should be listed in descending order using "
        "identifiers. The most relevant passages should be listed first. The output format "
        "should be [] > [], e.g., [20] > [19]. Only response the ranking results, do not say "
        "any word or explain.")
_NUMBER = re.compile(r"\d+")


def cut_words(text: str, max_words: int = MAX_WORDS) -> str:
    """`text` with runs of whitespace made single spaces, cut to its first `max_words` words."""
    return " ".join(text.split()[:max_words])


def build_messages(query: str, passages: Sequence[str], max_words: int = MAX_WORDS
                   ) -> tuple[str, list[dict[str, str]]]:
    """RankGPT's (system prompt, messages) for ranking `passages` (1-based ids) for `query`.

    RankGPT puts the system prompt first in its message list; the Messages API takes it as
    the separate `system` parameter, and the turns that follow already alternate user /
    assistant, starting and ending with a user turn, as the API requires.
    """
    num = len(passages)
    messages = [{"role": "user", "content": PREFIX.format(num=num, query=query)},
                {"role": "assistant", "content": PREFIX_REPLY}]
    for rank, text in enumerate(passages, start=1):
        messages.append({"role": "user",
                         "content": PASSAGE.format(rank=rank, content=cut_words(text, max_words))})
        messages.append({"role": "assistant", "content": RECEIVED.format(rank=rank)})
    messages.append({"role": "user", "content": POST.format(query=query, num=num)})
    return SYSTEM, messages


@dataclass(frozen=True)
class Permutation:
    """A parsed reply: the order (0-based, a full permutation of range(n)) and its defects.

    `valid` is False when the reply named no passage at all (then `order` is the identity);
    `unknown` counts numbers outside 1..n, `repeated` numbers named twice, `missing` passages
    the reply left out (appended in their original order).
    """

    order: list[int]
    valid: bool
    unknown: int = 0
    repeated: int = 0
    missing: int = 0

    @property
    def clean(self) -> bool:
        """True for a reply that named every passage exactly once and nothing else."""
        return self.valid and not (self.unknown or self.repeated or self.missing)


def parse_permutation(reply: str, n: int) -> Permutation:
    """RankGPT's `receive_permutation` on a reply about `n` passages.

    Every non-digit becomes a space; each number minus 1 is a 0-based passage; repeats are
    dropped keeping the first; numbers outside 0..n-1 are dropped; passages not named are
    appended in their original order. So "[3] > [1] > [3] > [9]" about 4 passages gives
    [2, 0, 1, 3].
    """
    named = [int(x) - 1 for x in _NUMBER.findall(reply)]
    order: list[int] = []
    unknown = repeated = 0
    for i in named:
        if not 0 <= i < n:
            unknown += 1
        elif i in order:
            repeated += 1
        else:
            order.append(i)
    valid = bool(order)
    missing = [i for i in range(n) if i not in order]
    return Permutation(order + missing, valid, unknown, repeated, len(missing) if valid else 0)


def windows(n: int, size: int = 20, step: int = 10) -> list[tuple[int, int]]:
    """RankGPT's sliding windows over `n` candidates, back to front, as [start, end) pairs.

    For n = 100, size 20, step 10: (80, 100), (70, 90), …, (0, 20) — 9 windows, as in
    `sliding_windows`. When n − size is not a multiple of `step`, the last window is clipped
    to start at 0 (RankGPT's loop would stop before it and leave the head unranked); fewer
    than `size` candidates make one window.
    """
    if size < 1 or not 1 <= step <= size:
        raise RagkitError(f"rerank window {size}, step {step}: need 1 <= step <= window")
    out: list[tuple[int, int]] = []
    end = n
    while end > 0:
        start = max(end - size, 0)
        out.append((start, end))
        if start == 0:
            break
        end -= step
    return out


def apply_in_place(items: list, start: int, order: Sequence[int]) -> None:
    """Reorder `items[start:start + len(order)]` so that its j-th item is the old `order[j]`."""
    window = items[start:start + len(order)]
    items[start:start + len(order)] = [window[i] for i in order]
