"""What the paid-call cache saved: its rows summed per model and endpoint, and the table
`ragkit cache stats` prints.

What it is: `stats_of(db)`, one `ModelStats` per (model, endpoint) of the `calls` table `db`
reads (`ragkit.call_rows` holds its columns), priced with `ragkit.pricing` (batch
results at batch prices), and `format_stats`. What it is not: the cache itself, nor a reader
of its file (`ragkit.cache.CallCache.stats`, `cache_command.read_stats` open it, where it
can be written or not). Its own module because the cache's file handling left no room beside it.
"""
from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from ragkit.call_rows import columns
from ragkit.money import dollars
from ragkit.pricing import PRICES, Usage, batch_cost, cost


@dataclass(frozen=True)
class ModelStats:
    """What the cache holds for one (model, endpoint): calls made, hits, tokens, dollars."""

    model: str
    endpoint: str
    misses: int  # replies stored = requests that were sent
    hits: int  # requests answered from the cache instead
    spent: Usage  # tokens of the stored replies
    saved: Usage  # tokens the hits would have cost again
    dollars_spent: float | None  # None: no price (stand-in replies, unknown model)
    dollars_saved: float | None
    standin: bool = False  # replies of the offline stand-in: tokens estimated, nothing paid


def stats_of(db: sqlite3.Connection) -> list[ModelStats]:
    """`CallCache.stats` of the call cache `db` is connected to. Read as it is (where it
    cannot be written), a file may have no table yet (an empty one) or no `batch` or
    `unreported` column (made before them)."""
    held = columns(db)
    if not held:
        return []
    batch, unknown = (name if name in held else "0" for name in ("batch", "unreported"))
    rows = db.execute(
        f"SELECT model, endpoint, {batch} AS b, COUNT(*), SUM(hits), SUM(input), SUM(output), "
        f"SUM(cache_write), SUM(cache_read), SUM({unknown}), SUM(hits * input), "
        f"SUM(hits * output), SUM(hits * cache_write), SUM(hits * cache_read), "
        f"SUM(hits * {unknown}), priced > 0 FROM calls "
        "GROUP BY model, endpoint, b, priced > 0 ORDER BY model, endpoint, b").fetchall()
    merged: dict[tuple[str, str, bool], ModelStats] = {}
    for model, endpoint, in_batch, n, hits, *tokens, priced in rows:
        spent, saved = Usage(*tokens[:5]), Usage(*tokens[5:])
        price_of = batch_cost if in_batch else cost
        known = bool(priced) and model in PRICES
        row = ModelStats(model, endpoint, n, hits, spent, saved,
                         price_of(spent, model) if known else None,
                         price_of(saved, model) if known else None, standin=not priced)
        key = (model, endpoint, row.standin)  # the stand-in's estimates never summed in
        before = merged.get(key)
        merged[key] = row if before is None else _add(before, row)
    return sorted(merged.values(), key=lambda s: (s.model, s.endpoint, s.standin))


def _add(a: ModelStats, b: ModelStats) -> ModelStats:
    """Two rows of one (model, endpoint) as one; dollars None if either has no price."""
    def plus(x: float | None, y: float | None) -> float | None:
        return None if x is None or y is None else x + y
    return ModelStats(a.model, a.endpoint, a.misses + b.misses, a.hits + b.hits,
                      a.spent + b.spent, a.saved + b.saved,
                      plus(a.dollars_spent, b.dollars_spent),
                      plus(a.dollars_saved, b.dollars_saved), a.standin)


def format_stats(stats: list[ModelStats]) -> str:
    """The `ragkit cache stats` table: one line per model and endpoint."""
    if not stats:
        return "the call cache is empty"
    lines = [f"{'model':<28} {'endpoint':<26} {'misses':>6} {'hits':>6} {'tokens in':>12} "
             f"{'out':>10} {'write':>11} {'read':>12} {'spent $':>11} {'saved $':>11}"]
    for s in stats:
        money = [f"{dollars(v):>11}" if v is not None else f"{'no cost':>11}"
                 for v in (s.dollars_spent, s.dollars_saved)]
        lines.append(f"{s.model + (' *' if s.standin else ''):<28} {s.endpoint:<26} "
                     f"{s.misses:>6,} {s.hits:>6,} {s.spent.input:>12,} {s.spent.output:>10,} "
                     f"{s.spent.cache_write:>11,} {s.spent.cache_read:>12,} {money[0]} {money[1]}")
    if any(s.standin for s in stats):
        lines.append("* answered by the offline stand-in in that model's place (a program, not "
                     "the model): tokens estimated, one per 4 UTF-8 bytes; nothing paid")
    if any(s.dollars_spent is None and not s.standin for s in stats):
        lines.append("no cost: a model without a price row")
    for s in stats:  # never summed as 0 tokens and called what was spent
        if s.spent.unreported:
            lines.append(f"{s.model} {s.endpoint}: {s.spent.unknown()[2:]}")
    return "\n".join(lines)
