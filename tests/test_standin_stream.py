"""The stand-in streams any reply as server-sent events the SDK's `messages.stream` parses."""
from __future__ import annotations

import anthropic
import pytest

from ragkit import standin
from ragkit.answer import Answer, answer, answer_stream
from ragkit.cache import CallCache
from ragkit.documents import Chunk
from ragkit.llm import LLM, UsageLog, make_client
from ragkit.standin import sse

MODEL = "claude-haiku-4-5"
ASK = {"model": MODEL, "max_tokens": 200, "messages": [{"role": "user", "content": "Hi?"}]}
CITATION = {"type": "search_result_location", "source": "a#0", "title": "A",
            "cited_text": "Cited words. ", "search_result_index": 0, "start_block_index": 0,
            "end_block_index": 1}
CONTENT = [{"type": "text", "text": "Cited words.", "citations": [CITATION]},
           {"type": "text", "text": " Plain tail  text."},
           {"type": "tool_use", "id": "toolu_1", "name": "search",
            "input": {"query": "refund deadline in days", "k": 5, "filters": {"lang": "en"}}}]


def fixed(path, body):
    """The stand-in's envelope (id, usage) around fixed content."""
    status, reply = standin.respond(path, body)
    if status == 200 and "content" in reply:
        reply = {**reply, "content": CONTENT, "stop_reason": "tool_use",
                 "usage": {**reply["usage"], "output_tokens": 42}}
    return status, reply


def client(handler=standin.respond):
    return make_client(max_retries=0, transport=standin.transport(handler))


def _blocks(message):
    return [{k: v for k, v in b.to_dict().items() if k != "parsed_output"}
            for b in message.content]


def test_event_sequence_follows_the_messages_api():
    names = [name for name, _ in sse.events({"content": [{"type": "text", "text": "a b"}],
                                             "usage": {"input_tokens": 1, "output_tokens": 2},
                                             "stop_reason": "end_turn"})]
    assert names == ["message_start", "ping", "content_block_start", "content_block_delta",
                     "content_block_delta", "content_block_stop", "message_delta",
                     "message_stop"]


def test_streamed_reply_accumulates_to_the_unstreamed_one():
    sdk = client(fixed)
    plain = sdk.messages.create(**ASK)
    with sdk.messages.stream(**ASK) as stream:
        pieces = list(stream.text_stream)
        final = stream.get_final_message()
    assert pieces == ["Cited ", "words.", " ", "Plain ", "tail  ", "text."]
    assert _blocks(final) == _blocks(plain)
    assert final.content[0].citations[0].search_result_index == 0
    assert final.content[2].input == CONTENT[2]["input"]
    assert (final.stop_reason, final.usage.output_tokens) == ("tool_use", 42)
    assert final.usage.input_tokens == plain.usage.input_tokens


def test_streaming_over_the_socket_server():
    with standin.serve() as url:
        sdk = anthropic.Anthropic(api_key="test", base_url=url, max_retries=0)
        with sdk.messages.stream(**ASK) as stream:
            text = "".join(stream.text_stream)
        assert text == standin.NO_RULE
        with pytest.raises(anthropic.NotFoundError):  # errors stay JSON with their status
            with sdk.messages.stream(**{**ASK, "model": "no-such-model"}) as stream:
                list(stream)


CHUNKS = [Chunk("refund#0", "refund", "Refunds are accepted within 21 days of delivery. "
                "Keep the receipt.", metadata={"title": "Refund policy"}),
          Chunk("ship#0", "ship", "Parcels to Denmark go by road.",
                metadata={"title": "Shipping policy"})]
HITS = [("refund#0", 2.0), ("ship#0", 1.0)]
QUESTION = "Within how many days are refunds accepted?"


def test_answer_stream_yields_the_text_in_pieces_then_the_same_answer(tmp_path):
    llm = LLM(client(), cache=False)
    *pieces, final = list(answer_stream(QUESTION, HITS, CHUNKS, llm=llm))
    assert isinstance(final, Answer) and len(pieces) > 3
    assert "".join(pieces) == final.text == "Refunds are accepted within 21 days of delivery. [1]"
    assert final.citations == answer(QUESTION, HITS, CHUNKS, llm=llm).citations


def test_a_streamed_call_is_cached_and_metered_like_create(tmp_path):
    usage = UsageLog()
    llm = LLM(client(), cache=CallCache(tmp_path / "calls.sqlite"), usage=usage)
    first = list(answer_stream(QUESTION, HITS, CHUNKS, llm=llm))
    again = list(answer_stream(QUESTION, HITS, CHUNKS, llm=llm))
    assert len(again) == 2 and again[0] == first[-1].text  # from the cache: one piece
    row = usage.models[MODEL]
    assert (row.requests, row.cache_hits, row.standin) == (1, 1, 2)
    assert answer(QUESTION, HITS, CHUNKS, llm=llm).text == first[-1].text
    assert usage.models[MODEL].cache_hits == 2  # create shares the streamed call's entry
