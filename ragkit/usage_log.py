"""Per-model token sums of every Claude reply in this process, priced: what a run spent.

What it is: `UsageLog` — thread-safe sums of the four usage counters (input, output, cache
write, cache read) per model, split into calls sent to the API and calls answered by the
paid-call cache; `summary()` prints one line per model with tokens and dollars
(`ragkit.pricing.PRICES`). Replies of an offline backend (the stand-in) are summed but never
priced, and their line says so: "MODEL (answered by the offline stand-in): …; estimated
tokens in …; no cost" (the stand-in's usage is its one-token-per-4-bytes
estimate, not a count). `run_usage()` is the log every `ragkit.llm.LLM` of the
process records to unless given its own.
What it is not: a client. It imports no SDK, so a command can print a run's usage without
loading one (`ragkit.llm` re-exports these names).
"""
from __future__ import annotations

import threading
from collections import defaultdict
from dataclasses import dataclass, field

from ragkit.money import dollars as money_text
from ragkit.pricing import BATCH_DISCOUNT, PRICES, Usage, cost
from ragkit.text_stats import counted


@dataclass
class ModelUsage:
    """One model's tokens in a run: sent to the API, served from the cache, unpriced."""

    requests: int = 0
    cache_hits: int = 0
    spent: Usage = field(default_factory=Usage)
    saved: Usage = field(default_factory=Usage)
    standin: int = 0  # replies from the offline stand-in (no cost)
    batch: Usage = field(default_factory=Usage)  # the part of `spent` billed at batch prices
    batch_requests: int = 0


class UsageLog:
    """Thread-safe per-model sums of reply usage; `summary()` prints tokens and dollars."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.models: dict[str, ModelUsage] = defaultdict(ModelUsage)

    def record(self, model: str, usage: Usage, cached: bool, priced: bool,
               batch: bool = False) -> None:
        """Add one reply; `batch`: it came from a Message Batches result (half price)."""
        with self._lock:
            row = self.models[model]
            if batch and not cached:
                row.batch += usage
                row.batch_requests += 1
            if cached:
                row.cache_hits += 1
                row.saved += usage
            else:
                row.requests += 1
                row.spent += usage
            row.standin += not priced

    def dollars(self, model: str) -> float | None:
        """Dollars spent on `model` in this run; None when nothing of it was priced."""
        row = self.models.get(model)
        if row is None or row.standin or model not in PRICES:
            return None
        return cost(row.spent, model) - (1 - BATCH_DISCOUNT) * cost(row.batch, model)

    def summary(self, split_cache: bool = True) -> str:
        """One line per model: calls, tokens and dollars. `split_cache=False` counts calls
        answered by the paid-call cache with the others (tokens are what the calls carry), so
        the line does not depend on what an earlier run left in the cache."""
        lines = []
        for model, row in sorted(self.models.items()):
            s, dollars = row.spent, self.dollars(model)
            unpriced = "no cost" if row.standin else "no price row for this model"
            money = unpriced if dollars is None else money_text(dollars)
            saved = "" if dollars is None else f", {money_text(cost(row.saved, model))} saved"
            calls = f"{counted(row.requests, 'request')}, {row.cache_hits:,} from the call cache"
            if row.batch_requests:
                calls += f" ({counted(row.batch_requests, 'request')} in batches, at batch prices)"
            if not split_cache:
                s, calls = s + row.saved, counted(row.requests + row.cache_hits, "call")
                money = unpriced if dollars is None else \
                    f"{money_text(cost(s, model))} without the call cache"
                saved = ""
            who, tokens = model, "tokens"
            # a reply without usage, sent or served from the cache: in no figure of the line
            unknown = Usage(unreported=row.spent.unreported + row.saved.unreported)
            if row.standin:  # the stand-in's usage is its estimate, never a measurement
                who, tokens = f"{model} (answered by the offline stand-in)", "estimated tokens"
            lines.append(f"{who}: {calls}; {tokens} in {s.input:,}, out {s.output:,}, cache "
                         f"write {s.cache_write:,}, cache read {s.cache_read:,}; {money}{saved}"
                         f"{unknown.unknown()}")
        return "\n".join(lines) or "no Claude calls"

    def reset(self) -> None:
        with self._lock:
            self.models.clear()


RUN = UsageLog()


def run_usage() -> UsageLog:
    """The usage log every `LLM` of this process records to unless given its own."""
    return RUN
