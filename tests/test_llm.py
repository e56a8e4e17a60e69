"""Prices, usage, cost projections, the client factory and SDK error handling."""
from __future__ import annotations

import json

import httpx2
import pytest

from ragkit import standin
from ragkit.documents import RagkitError
from ragkit.errors import KeyRejected
from ragkit.llm import (LLM, PRICES, Usage, UsageLog, contextualization_cost, cost,
                        make_client, measured_contextualization_cost, project_corpus_cost)

HAIKU = "claude-haiku-4-5"
REPLY = {"id": "msg_1", "type": "message", "role": "assistant", "model": HAIKU,
         "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn",
         "stop_sequence": None,
         "usage": {"input_tokens": 100, "output_tokens": 10,
                   "cache_creation_input_tokens": None, "cache_read_input_tokens": 2000}}


def _llm(handler, max_retries=0, usage=None):
    client = make_client(max_retries=max_retries, transport=httpx2.MockTransport(handler))
    return LLM(client, cache=None, usage=usage or UsageLog())


def _ask(llm, model=HAIKU):
    return llm.create(model=model, max_tokens=50, temperature=0.0,
                      messages=[{"role": "user", "content": "hello"}])


def test_seed_cost_table_claude_3_haiku_anthropic_formula():
    # D=8000, C=800, I=50, O=100 → N=10. Claude 3 Haiku $/M: write .30, read .03, in .25,
    # out 1.25. Per doc: 8000·.30 + 10·8000·.03 + 10·850·.25 + 10·100·1.25
    #                  = 2400 + 2400 + 2125 + 1250 = 8175 (µ$) → ×125 docs = $1.021875.
    table = contextualization_cost(8000, 800, 50, 100, "claude-3-haiku-20240307",
                                   formula="anthropic")
    assert table.cached == pytest.approx(1.021875)
    assert round(table.cached, 2) == 1.02


def test_seed_cost_table_haiku_4_5_billed_formula():
    # Haiku 4.5 $/M: write 1.25, read .10, in 1.00, out 5.00. Billed: one read fewer.
    # cached per doc: 8000·1.25 + 9·8000·.10 + 10·850·1 + 10·100·5
    #               = 10000 + 7200 + 8500 + 5000 = 30700 µ$ → ×125 = $3.8375
    # uncached: 10·8850·1 + 10·100·5 = 88500 + 5000 = 93500 µ$ → ×125 = $11.6875
    table = contextualization_cost(8000, 800, 50, 100, HAIKU)
    assert table.cached == pytest.approx(3.8375)
    assert table.uncached == pytest.approx(11.6875)


def test_one_hour_cache_writes_at_the_1h_price():
    # write 2.00 instead of 1.25: +8000·.75 = +6000 µ$ per doc → 36700·125 = $4.5875
    assert contextualization_cost(8000, 800, 50, 100, HAIKU, ttl="1h").cached == \
        pytest.approx(4.5875)


def test_measured_cost_from_usage():
    # Haiku 4.5: 1000·1 + 200·5 + 8000·1.25 + 72000·.10 = 1000+1000+10000+7200 = 19200 µ$
    usage = Usage(input=1000, output=200, cache_write=8000, cache_read=72000)
    assert cost(usage, HAIKU) == pytest.approx(0.0192)
    table = measured_contextualization_cost(usage, 8000, HAIKU)
    assert table.cached == pytest.approx(0.0192 * 125)
    # uncached: (1000+8000+72000)·1 + 200·5 = 82000 µ$
    assert table.uncached == pytest.approx(0.082 * 125)


def test_corpus_projection_matches_the_seed_table_and_bills_short_documents_uncached():
    seed = project_corpus_cost([(8000, [800] * 10)] * 125, HAIKU)  # 1M document tokens
    assert (seed.cached, seed.uncached) == (pytest.approx(3.8375), pytest.approx(11.6875))
    # 3000 tokens < Haiku 4.5's 4096 minimum: four uncached calls, each
    # 3000 + 800 + 50 input tokens at $1/M and 100 output at $5/M:
    # 4·3850·1 + 4·100·5 = 15400 + 2000 = 17400 µ$, cached or not.
    short = project_corpus_cost([(3000, [800] * 4)], HAIKU)
    assert (short.cached, short.uncached) == (pytest.approx(0.0174), pytest.approx(0.0174))
    assert (short.below_cache_minimum, short.document_tokens) == (1, 3000)
    # Claude 3 Haiku caches from 2048 tokens: the same document is cached there.
    assert project_corpus_cost([(3000, [800] * 4)], "claude-3-haiku-20240307") \
        .below_cache_minimum == 0


def test_usage_counts_none_as_zero_and_adds():
    usage = Usage.of(REPLY["usage"])
    assert usage == Usage(100, 10, 0, 2000)
    assert usage + Usage(1, 2, 3, 4) == Usage(101, 12, 3, 2004)
    assert usage.prompt_tokens == 2100


@pytest.mark.parametrize("call", [
    lambda: cost(Usage(), "claude-nope"),
    lambda: contextualization_cost(8000, 800, 50, 100, "gpt-4"),
])
def test_unknown_model_is_a_clear_error(call):
    with pytest.raises(RagkitError, match="unknown model .*known: claude-haiku-4-5"):
        call()


def test_price_table_rows_match_the_notes():
    assert PRICES[HAIKU].min_cacheable == 4096
    assert PRICES["claude-3-haiku-20240307"].min_cacheable == 2048


def test_without_a_key_the_stand_in_answers_through_the_sdk(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    llm = LLM(make_client(), cache=None, usage=UsageLog())
    assert llm.offline
    reply = _ask(llm)
    assert reply.content[0].text == standin.NO_RULE
    assert reply.id.startswith(standin.STANDIN_ID_PREFIX)
    assert llm.usage.summary().startswith(
        f"{HAIKU} (answered by the offline stand-in): 1 request")
    assert llm.usage.summary().endswith("; no cost")


def test_with_a_key_the_real_client_reads_the_environment(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    client = make_client()
    assert client.api_key == "sk-test"
    assert str(client.base_url).startswith("http://127.0.0.1:9")


def test_stand_in_estimates_tokens_by_its_documented_rule():
    assert standin.estimate_tokens("") == 0
    assert standin.estimate_tokens("abcdefgh") == 2
    assert standin.estimate_tokens("abcdefghi") == 3
    assert standin.estimate_tokens("청약") == 2  # 6 UTF-8 bytes
    status, body = standin.respond("/v1/messages/count_tokens", {
        "model": HAIKU, "system": "abcd", "messages": [{"role": "user", "content": "abcdefgh"}]})
    assert (status, body) == (200, {"input_tokens": 3})


def test_temperature_goes_in_the_body_and_priced_usage_is_summed():
    seen = []

    def handler(request):
        seen.append(json.loads(request.read()))
        return httpx2.Response(200, json=REPLY)

    log = UsageLog()
    llm = _llm(handler, usage=log)
    _ask(llm)
    _ask(llm)
    assert seen[0]["temperature"] == 0.0 and seen[0]["model"] == HAIKU
    # two replies: in 200, out 20, read 4000 → 200·1 + 20·5 + 4000·.1 = 700 µ$
    assert log.dollars(HAIKU) == pytest.approx(0.0007)
    assert log.summary() == (f"{HAIKU}: 2 requests, 0 from the call cache; tokens in 200, "
                             f"out 20, cache write 0, cache read 4,000; $0.000700, $0.00 saved")
    for _ in range(1200):  # counts of calls read at a glance, as the token counts are
        log.record(HAIKU, Usage(), cached=True, priced=True)
    assert log.summary().startswith(f"{HAIKU}: 2 requests, 1,200 from the call cache;")


def test_429_then_500_then_success_is_retried_by_the_sdk():
    statuses = iter([429, 500])

    def handler(request):
        status = next(statuses, 200)
        if status != 200:
            return httpx2.Response(status, headers={"retry-after-ms": "1"}, json={
                "type": "error", "error": {"type": "overloaded_error", "message": "busy"}})
        return httpx2.Response(200, json=REPLY)

    assert _ask(_llm(handler, max_retries=2)).content[0].text == "ok"


@pytest.mark.parametrize("status, kind, message", [
    (401, "authentication_error", "rejected the key in ANTHROPIC_API_KEY"),
    (429, "rate_limit_error", "kept failing (429 rate_limit_error: model: x ***; 2 attempts with the SDK's back-off)"),
    (500, "api_error", "kept failing (500 api_error: model: x ***; 2 attempts with the SDK's back-off)"),
    (404, "not_found_error", "does not know model 'claude-haiku-4-5'"),
])
def test_errors_after_retries_are_one_line_without_the_key(monkeypatch, status, kind, message):
    secret = "sk-ant-very-secret-key"
    monkeypatch.setenv("ANTHROPIC_API_KEY", secret)

    def handler(request):
        return httpx2.Response(status, headers={"retry-after-ms": "1"}, json={
            "type": "error", "error": {"type": kind, "message": f"model: x {secret}"}})

    with pytest.raises(RagkitError) as err:
        _ask(_llm(handler, max_retries=1))
    assert message in str(err.value)
    assert secret not in str(err.value) and "\n" not in str(err.value)
    # a refused key is its own kind: a reranker stops on it instead of trying every query
    assert isinstance(err.value, KeyRejected) == (status == 401)


def test_a_claude_reranked_search_stops_on_a_refused_key():
    """It warned and kept the first stage's order query after query ("rerun to continue"),
    a refused call each, exit 0."""
    from ragkit.documents import Chunk
    from ragkit.rerank import Candidate, RerankStage
    from ragkit.rerank.claude import ClaudeReranker
    sent = []

    def handler(request):
        sent.append(request.url.path)
        return httpx2.Response(401, json={"type": "error", "error": {
            "type": "authentication_error", "message": "invalid x-api-key"}})

    stage = RerankStage(ClaudeReranker(llm=_llm(handler)))
    candidates = [Candidate(Chunk(f"c{n}", "d", f"text {n}"), 1.0 - n / 10) for n in range(3)]
    with pytest.raises(KeyRejected, match="rejected the key in ANTHROPIC_API_KEY"):
        stage("which text?", candidates, 2)
    assert sent == ["/v1/messages"]  # one refused call, not one per query


def test_an_error_not_retried_does_not_claim_retries():
    """With --api-retries 0 a 529 is one request: the line says it was not retried."""
    sent = []

    def handler(request):
        sent.append(request)
        return httpx2.Response(529, json={"type": "error", "error": {
            "type": "overloaded_error", "message": "Overloaded"}})

    with pytest.raises(RagkitError) as err:
        _ask(_llm(handler, max_retries=0))
    assert len(sent) == 1
    assert str(err.value) == ("the Anthropic API kept failing (529 overloaded_error: Overloaded; "
                              "not retried (retries 0))")


@pytest.mark.parametrize("body", [b"not json", b'{"type": "message"}'])
def test_a_malformed_reply_is_a_clear_error(body):
    def handler(request):
        return httpx2.Response(200, content=body, headers={"content-type": "application/json"})

    with pytest.raises(RagkitError, match="malformed reply from the Anthropic API"):
        _ask(_llm(handler))


@pytest.mark.parametrize("failure, message", [
    (httpx2.ConnectError("refused"), r"cannot reach the Anthropic API \(refused; a request is "
                                     r"tried once, also when its reply breaks off before its "
                                     r"end\)"),
    (httpx2.ReadTimeout("slow"), r"the Anthropic API did not answer \(1 attempt, each waiting "
                                 r"up to 120 s for a reply; change with --api-timeout"),
])
def test_dead_connections_and_timeouts_are_clear_errors(failure, message):
    def handler(request):
        raise failure

    with pytest.raises(RagkitError, match=message):
        _ask(_llm(handler))


def test_stand_in_refuses_an_unknown_model_like_the_api():
    with pytest.raises(RagkitError, match="does not know model 'claude-nope'"):
        _ask(LLM(make_client(max_retries=0, transport=standin.transport()), cache=None,
                 usage=UsageLog()), model="claude-nope")


def test_seed_cost_table_rows_are_the_hand_computed_ones():
    from ragkit.pricing import seed_cost_table
    table = seed_cost_table()
    assert table["cached $/M doc tokens"].round(4).tolist() == [1.0219, 0.9919, 3.8375, 4.5875]
    # Claude 3 Haiku as billed: 1.021875 − one read of 8000 tokens per document
    # (8000 · $0.03/M · 125 documents = $0.03) = $0.991875
    assert table["uncached $/M doc tokens"].round(4).tolist() == [2.9219, 2.9219, 11.6875,
                                                                   11.6875]


def test_stand_in_replies_are_keyed_by_the_stand_ins_own_source(tmp_path, monkeypatch):
    """A changed rule must never be answered from replies the old program wrote."""
    from ragkit import llm
    (tmp_path / "__init__.py").write_text("rule = 1\n")
    monkeypatch.setattr(standin, "__file__", str(tmp_path / "__init__.py"))
    before = llm._standin_version()
    (tmp_path / "__init__.py").write_text("rule = 2\n")
    assert llm._standin_version() != before
    assert llm.STANDIN_BACKEND.startswith("offline-stand-in@")


def test_summary_without_the_cache_split_does_not_depend_on_earlier_runs():
    first, second = UsageLog(), UsageLog()
    first.record(HAIKU, Usage(100, 10, 0, 0), cached=False, priced=False)
    second.record(HAIKU, Usage(100, 10, 0, 0), cached=True, priced=False)
    assert first.summary() != second.summary()
    assert first.summary(split_cache=False) == second.summary(split_cache=False) == (
        f"{HAIKU} (answered by the offline stand-in): 1 call; estimated tokens in 100, out 10, "
        "cache write 0, cache read 0; no cost")


def _stream_of(reply: dict, cut: bool) -> bytes:
    """The SSE body streaming `reply`; `cut`: broken off after the text, before the stop
    reason and `message_stop` (a connection reset mid-reply)."""
    from ragkit.standin.sse import events, frame
    sent = events(reply)
    if cut:
        sent = [e for e in sent if e[0] not in ("message_delta", "message_stop")]
    return b"".join(frame(name, data) for name, data in sent)


def test_a_stream_cut_before_its_end_is_an_error_and_never_cached(tmp_path):
    """A reply whose stream broke off ("The refund policy", no stop reason) was printed as
    the whole answer, cached, and served from the cache on every later run."""
    from ragkit.cache import CallCache
    cut, sent = [True], []

    def handler(request):
        sent.append(request)
        if not json.loads(request.content).get("stream"):
            return httpx2.Response(200, json={**REPLY, "stop_reason": None} if cut[0] else REPLY)
        return httpx2.Response(200, content=_stream_of(REPLY, cut[0]),
                               headers={"content-type": "text/event-stream"})

    client = make_client(max_retries=0, transport=httpx2.MockTransport(handler))
    llm = LLM(client, cache=CallCache(tmp_path / "calls.sqlite"), usage=UsageLog())
    body = dict(model=HAIKU, max_tokens=50, messages=[{"role": "user", "content": "hello"}])
    with pytest.raises(RagkitError, match=r"broke off before its end \(no stop reason: cut "
                                          r"mid-reply\); nothing was kept: run again"):
        list(llm.stream(**body))
    with pytest.raises(RagkitError, match="broke off before its end"):
        llm.create(**body)  # not served from the cache: asked again
    assert len(sent) == 2
    cut[0] = False

    def run():
        events = llm.stream(**body)
        while True:
            try:
                next(events)
            except StopIteration as stop:
                return stop.value

    assert run().content[0].text == "ok" and len(sent) == 3
    assert llm.create(**body).content[0].text == "ok" and len(sent) == 3  # now cached


def test_a_cut_reply_cached_by_an_earlier_version_is_asked_again(tmp_path):
    from ragkit.cache import CallCache, request_key
    from ragkit.pricing import Usage as Counted
    sent = []

    def handler(request):
        sent.append(request)
        return httpx2.Response(200, json=REPLY)

    llm = LLM(make_client(max_retries=0, transport=httpx2.MockTransport(handler)),
              cache=CallCache(tmp_path / "calls.sqlite"), usage=UsageLog())
    body = dict(model=HAIKU, max_tokens=50, messages=[{"role": "user", "content": "hello"}])
    key = request_key("/v1/messages", llm.backend, body)
    llm.cache.put(key, "/v1/messages", HAIKU, {**REPLY, "stop_reason": None,
                                               "content": [{"type": "text", "text": "o"}]},
                  Counted(), True)
    assert llm.create(**body).content[0].text == "ok" and len(sent) == 1


class _BreaksOff(httpx2.SyncByteStream):
    """The first half of `body`, then the connection breaks (a reset mid-reply)."""

    def __init__(self, body: bytes) -> None:
        self.body = body

    def __iter__(self):
        yield self.body[: len(self.body) // 2]
        raise httpx2.RemoteProtocolError("peer closed connection without sending complete "
                                         "message body")


def test_a_reply_breaking_off_is_asked_again_and_the_error_says_so():
    """The SDK re-sends a request whose reply body breaks off, as after a dropped connection
    (each try generated and billed); the line used to say such a reply "is not retried"."""
    sent = []

    def handler(request):
        sent.append(request)
        return httpx2.Response(200, headers={"content-type": "application/json"},
                               stream=_BreaksOff(json.dumps(REPLY).encode()))

    with pytest.raises(RagkitError) as err:
        _ask(_llm(handler, max_retries=2))
    assert len(sent) == 3
    assert str(err.value) == (
        "cannot reach the Anthropic API (peer closed connection without sending complete "
        "message body; a request is tried up to 3 times, also when its reply breaks off "
        "before its end)")


def test_a_stream_breaking_off_is_not_asked_again_and_the_error_says_so():
    sent = []

    def handler(request):
        sent.append(request)
        return httpx2.Response(200, headers={"content-type": "text/event-stream"},
                               stream=_BreaksOff(_stream_of(REPLY, cut=False)))

    llm = _llm(handler, max_retries=2)
    with pytest.raises(RagkitError) as err:
        list(llm.stream(model=HAIKU, max_tokens=50,
                        messages=[{"role": "user", "content": "hello"}]))
    assert len(sent) == 1
    assert str(err.value) == (
        "cannot reach the Anthropic API (peer closed connection without sending complete "
        "message body; a request is tried up to 3 times, a streamed reply cut off mid-way "
        "is not retried)")


def test_one_endpoint_written_with_or_without_a_trailing_slash_is_one_cache(tmp_path):
    """`ANTHROPIC_BASE_URL=https://host` and `https://host/` are one API: the second paid for
    every call again (its cache key named another backend)."""
    import anthropic

    from ragkit.cache import CallCache
    sent = []

    def handler(request):
        sent.append(request.url.path)
        return httpx2.Response(200, json=REPLY)

    cache = CallCache(tmp_path / "calls.sqlite")
    for base in ("http://127.0.0.1:9", "http://127.0.0.1:9/"):
        client = anthropic.Anthropic(api_key="k", base_url=base, max_retries=0,
                                     http_client=httpx2.Client(transport=httpx2.MockTransport(handler)))
        llm = LLM(client, cache=cache, usage=UsageLog())
        assert llm.backend == "http://127.0.0.1:9"
        assert _ask(llm).content[0].text == "ok"
    assert sent == ["/v1/messages"]  # the second answered from the cache


def _sse(*events: dict) -> bytes:
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


def test_a_stream_whose_first_event_lacks_usage_is_one_line_not_a_traceback():
    """The SDK adds a stream's usage up as it goes; a `message_start` without it was an
    AttributeError traceback after the answer's text had been printed (`ask --stream`)."""
    start = {**REPLY, "content": [], "stop_reason": None, "usage": None}
    body = _sse({"type": "message_start", "message": start},
                {"type": "content_block_start", "index": 0,
                 "content_block": {"type": "text", "text": ""}},
                {"type": "content_block_delta", "index": 0,
                 "delta": {"type": "text_delta", "text": "ok"}},
                {"type": "content_block_stop", "index": 0},
                {"type": "message_delta", "delta": {"stop_reason": "end_turn",
                                                    "stop_sequence": None},
                 "usage": {"output_tokens": 3}},
                {"type": "message_stop"})
    llm = _llm(lambda request: httpx2.Response(
        200, content=body, headers={"content-type": "text/event-stream"}))
    with pytest.raises(RagkitError, match=r"^malformed reply from the Anthropic API "
                                          r"\(AttributeError: ") as caught:
        list(llm.stream(model=HAIKU, max_tokens=50,
                        messages=[{"role": "user", "content": "hello"}]))
    assert "\n" not in str(caught.value)


def test_a_reply_without_usage_is_kept_and_its_cost_said_to_be_unknown(tmp_path):
    """It was paid for, refused as malformed ("rerun to continue") and paid for again on
    every re-run, never getting further."""
    from ragkit.cache import CallCache
    sent = []

    def handler(request):
        sent.append(request)
        return httpx2.Response(200, json={**REPLY, "usage": None})

    log = UsageLog()
    client = make_client(max_retries=0, transport=httpx2.MockTransport(handler))
    llm = LLM(client, cache=CallCache(tmp_path / "calls.sqlite"), usage=log)
    assert _ask(llm).content[0].text == "ok" and _ask(llm).content[0].text == "ok"
    assert len(sent) == 1  # the second from the cache
    assert log.summary().startswith("claude-haiku-4-5: 1 request, 1 from the call cache; "
                                    "tokens in 0, out 0, ")
    # the cache hit is a reply without usage too: what it saved is unknown, not $0.00
    assert log.summary().endswith("; 2 replies reported no usage: their tokens and cost are "
                                  "unknown, not in these figures")
    assert Usage.of({"input_tokens": 5}) == Usage(unreported=1)
    assert Usage.of(None) + Usage(1, 2) == Usage(1, 2, unreported=1)
