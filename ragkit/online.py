"""What every client of a paid API (Anthropic, Voyage) shares: how long it waits, how often it
tries, and keys kept out of every error line.

What it is:
- `budget()`: the time and retry budget of one request, read from the environment each time
  a client is made (`ragkit index|search|eval|tune|ask|tool --api-timeout S --api-retries N`
  set the same variables for their process):
    RAGKIT_API_CONNECT_TIMEOUT  seconds to open a connection              (default 10)
    RAGKIT_API_TIMEOUT          seconds to wait for each read, and for    (default 120)
                                the rest of a reply not streamed once it
                                has begun
    RAGKIT_API_RETRIES          attempts after the first one, on a        (default 2)
                                timeout, a 429 or a 5xx, with back-off
  A dead endpoint (one that accepts the connection and never answers) is given up after about
  (retries + 1) × timeout plus the SDK's back-off: 3 × 120 s + ~2 s ≈ 6 minutes by default.
  The timeout is the HTTP libraries' timeout on each read, so alone it would let an endpoint
  that sends a byte every few seconds hold a call for ever: once a reply that is not streamed
  begins (its headers are in), the rest of it must also arrive within the timeout
  (`ragkit.whole_reply`: cut at the next piece after that and retried as a timeout), so such
  an attempt ends after about 2 × timeout. A streamed reply (`ragkit ask --stream`, a Message
  Batch's results file) may rightly run for minutes: only each of its reads is bounded.
  Why 120 s: both SDKs wait 600 s by default (anthropic 2.16 `DEFAULT_TIMEOUT`, voyageai
  0.5 `TIMEOUT_SECS`), and a non-streamed Claude reply sends nothing until it is complete —
  a long-context prompt of ~200K tokens with a 1,024-token reply can take a minute, so a
  shorter read timeout would cut (and pay for again) calls that were going to succeed.
- `scrub(text, *keys)`: the one function every error path of `ragkit.llm`, the Voyage
  embedders and the Voyage reranker passes its message through: API keys (the environment's
  and any given), `Bearer ...` and `x-api-key` header values and key-shaped tokens
  (`sk-ant-...`, `pa-...`) become `***`, and the text is folded onto one line.

What it is not: a retry layer. Each SDK retries by its own rules (Anthropic: connection
errors, timeouts, 408/409/429/5xx, honouring `retry-after`; Voyage: timeouts, 429 and
502-504); this module only sets their budgets.
"""
from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass

from ragkit.documents import RagkitError

CONNECT_TIMEOUT = 10.0  # seconds
READ_TIMEOUT = 120.0  # seconds
RETRIES = 2
ENV_CONNECT, ENV_TIMEOUT, ENV_RETRIES = ("RAGKIT_API_CONNECT_TIMEOUT", "RAGKIT_API_TIMEOUT",
                                         "RAGKIT_API_RETRIES")
KEY_VARIABLES = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "VOYAGE_API_KEY")
HOW_TO_CHANGE = (f"--api-timeout / {ENV_TIMEOUT}, --api-retries / {ENV_RETRIES}, "
                 f"{ENV_CONNECT}")
ONCE_CHANGE = f"--api-timeout / {ENV_TIMEOUT}, {ENV_CONNECT}"  # for a client that never retries


@dataclass(frozen=True)
class Budget:
    """Seconds to connect, seconds to wait for each read, and retries after the first try."""

    connect: float = CONNECT_TIMEOUT
    read: float = READ_TIMEOUT
    retries: int = RETRIES

    @property
    def attempts(self) -> int:
        return self.retries + 1

    @property
    def tries(self) -> str:
        """"1 attempt", "3 attempts"."""
        return "1 attempt" if self.attempts == 1 else f"{self.attempts} attempts"

    @property
    def tries_up_to(self) -> str:
        """"once", "up to 3 times"."""
        return "once" if self.attempts == 1 else f"up to {self.attempts} times"

    def describe(self) -> str:
        """E.g. "3 attempts, each waiting up to 120 s for a reply"."""
        return f"{self.tries}, each waiting up to {self.read:g} s for a reply"

    def timed_out(self, trickled: float | None = None, stalled: float | None = None,
                  retried: bool = True) -> str:
        """What an API did when its calls timed out, after the SDK's retries: "did not answer
        (3 attempts, …; change with …)"; when `stalled` (`whole_reply.stalled_after`) is the
        read timeout a reply that began then waited past, "timed out mid-reply: the reply
        began, then nothing more came for 120 s (…)" (it read "cannot reach", as if no
        connection had been made); or, when `trickled` (`whole_reply.trickled_after`) is the
        deadline a reply that trickled in was cut at, "was too slow: gave up after 120 s: the
        reply trickled in after it began and was not whole by then (…)". Not `retried` (a
        client that tries once, whatever --api-retries says: the Voyage Batch API's), the
        parentheses say "1 attempt" and leave --api-retries out of what changes it."""
        tries, how = (self.tries, HOW_TO_CHANGE) if retried else ("1 attempt", ONCE_CHANGE)
        if stalled is not None and trickled is None:
            return (f"timed out mid-reply: the reply began, then nothing more came for "
                    f"{stalled:g} s ({tries}, each waiting up to {self.read:g} s for a reply; "
                    f"change with {how})")
        if trickled is None:
            return (f"did not answer ({tries}, each waiting up to {self.read:g} s for a reply; "
                    f"change with {how})")
        return (f"was too slow: gave up after {trickled:g} s: the reply trickled in after it "
                f"began and was not whole by then ({tries}, each waiting up to "
                f"{self.read:g} s for a reply to begin and {self.read:g} s more for all of it; "
                f"change with {how})")


def _number(name: str, default: float, integer: bool = False) -> float:
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    try:
        value = int(text) if integer else float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0 or (value == 0 and not integer):
        kind = "a whole number ≥ 0" if integer else "a number of seconds > 0"
        raise RagkitError(f"{name}={text!r}: expected {kind}")
    return value


def budget() -> Budget:
    """The budget the environment sets (module docstring); a bad value is one RagkitError."""
    return Budget(_number(ENV_CONNECT, CONNECT_TIMEOUT), _number(ENV_TIMEOUT, READ_TIMEOUT),
                  int(_number(ENV_RETRIES, RETRIES, integer=True)))


_HEADER = re.compile(r"(?i)(\bbearer\s+|x-api-key[\"']?\s*[:=]\s*[\"']?)[^\s\"',;}\]]+")
# Anthropic keys start "sk-ant-"; Voyage keys are "pa-" and ~43 more characters
_KEY_SHAPES = re.compile(r"\b(?:sk-ant-[\w-]{8,}|pa-[\w-]{24,})")


def scrub(text: str, *keys: str | None) -> str:
    """`text` on one line with every secret replaced by `***` (module docstring).

    `keys` are secrets known to the caller beyond the environment's (e.g. a Voyage key read
    from the file VOYAGE_API_KEY_PATH names); keys shorter than 4 characters are left, since
    masking them would mask ordinary words.
    """
    secrets = [os.environ.get(name) for name in KEY_VARIABLES] + list(keys)
    for secret in sorted({s for s in secrets if s and len(s) > 3}, key=len, reverse=True):
        text = text.replace(secret, "***")
    text = _HEADER.sub(lambda m: m.group(1) + "***", text)
    text = _KEY_SHAPES.sub("***", text)
    return " ".join(text.split())
