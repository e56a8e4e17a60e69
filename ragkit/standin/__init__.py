"""The offline stand-in for the Anthropic Messages API: a documented program, not a model.

What it is: `respond(path, request)` is a pure function from a request body (the JSON the
Anthropic SDK sends) to a status code and a reply body (the JSON the API would return). It
is served two ways, so callers never change code between online and offline runs:
- in process: `transport()` wraps it in an `httpx2.MockTransport` for
  `anthropic.Anthropic(http_client=httpx2.Client(transport=...))`, so every request and reply
  goes through the SDK's own serialization, validation and parsing;
- over a loopback socket: `serve()` runs it on `http://127.0.0.1:PORT` for
  `ANTHROPIC_BASE_URL`, to check that a command works exactly as against the real API.

What it answers: each kind of request is recognised by one *rule*, a function in its own
module of this package that looks at the request and returns the reply's content blocks (or
None: not mine). `RULES` lists them in order; the first that answers wins.
- `agent.py` (tried first: only requests with `tools`, which no other rule's callers send):
  the next step of a fixed program — an aggregation question over the reports → one
  `reports_sql` query from a template (`agent_sql.py`); a question in ordinary language →
  one `docs_search`; a code question → the agentic-RAG notes' grep/glob → read → callers
  walk-through; a note asked for → one `notes_save` — then an answer citing what the tools
  returned (`agent_state.py` reads the request, `agent_answer.py` writes the answer).
- `rerank.py` (tried first: its passages may quote anything): RankGPT's listwise-ranking
  conversation → a permutation by query-term overlap.
- `questions.py`: the golden-set generator's requests (`[ragkit questions: …]` headers,
  `ragkit.questions`) → a template question about the passage's key sentence with that
  sentence as the span, the round trip's best-covering sentence, `UNKNOWN` closed-book.
- `contextualize.py`: a `<document>…</document>` and a `<chunk>…</chunk>` in the user turn
  (Anthropic's contextual-retrieval prompt) → the chunk's structural context.
- `crag.py`: the CRAG and Self-RAG judge prompts (`[ragkit judge: crag_relevance v1]`,
  `selfrag_*`) → labels by word overlap; a `<documents>` long-context prompt → an extractive
  answer over the documents' sentences.
- `answer.py`: `search_result` blocks and a question, no tools → an extractive answer
  quoting the best-supported sentences with `search_result_location` citations, or
  "I don't know" when the support is below its threshold.
- no rule matches: the fixed text `NO_RULE`, stop reason `end_turn`.
- `POST /v1/messages/count_tokens`: `{"input_tokens": estimate}`.
- the Message Batches endpoints (`batches.py`, in process): a batch ends at once, each
  request answered as it would be interactively, results in reverse order.
- `"stream": true` (`client.messages.stream`): the same reply as server-sent events, built
  generically from it by `sse.py`, so every rule streams.
- a request without `model`, `max_tokens` or `messages`, a model not in
  `ragkit.pricing.PRICES`, or a body that is not JSON: the API's error JSON (400 / 404).

Usage is an estimate, and says so: `estimate_tokens` (`ragkit.text_stats`) counts one token
per 4 UTF-8 bytes (rounded up) of every text in `system`, `messages` and `tools` — the usual
rule of thumb for English; real tokenizers give more for code and Korean. Cache counters are
always 0 (a pure function keeps no cache). Reply ids start with `STANDIN_ID_PREFIX`, which
is how `ragkit.llm` knows a reply costs nothing, even when the stand-in is reached over a
socket.

How it is wired (imports run one way): the server is `api.py` (`respond`, `transport`,
`serve`), the rules import what they share from the leaf `base.py` (`Reply`, `user_text`),
never this package. No real module imports the stand-in: `ragkit.llm` asks the registry
`ragkit.llm_backends` for the offline backend, and the root package `ragkit` registers this
one there by name (`offline_backend()` below), so it loads on the first offline client.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

from ragkit import text_stats
from ragkit.llm_backends import OfflineBackend
from ragkit.standin.api import Handler, httpx_handler, respond, serve, transport
from ragkit.standin.base import NAME, NO_RULE, STANDIN_ID_PREFIX, Reply, Rule, user_text
from ragkit.text_stats import estimate_tokens, request_tokens

__all__ = ["NAME", "NO_RULE", "STANDIN_ID_PREFIX", "Handler", "Reply", "Rule",
           "estimate_tokens", "httpx_handler", "offline_backend", "request_tokens", "respond",
           "serve", "transport", "user_text", "version"]


def version() -> str:
    """A digest of the stand-in's own source (this package's files and `ragkit.text_stats`,
    whose token estimate is its usage), so its cached replies are keyed by the program that
    wrote them: after a change to a rule, old replies are never served again."""
    digest = hashlib.sha256()
    files = [*Path(__file__).parent.glob("*.py"), Path(text_stats.__file__)]
    for path in sorted(files, key=lambda p: p.name):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def offline_backend() -> OfflineBackend:
    """The stand-in as `ragkit.llm`'s offline backend (`ragkit.llm_backends`)."""
    return OfflineBackend(name=NAME, transport=transport, version=version)
