"""The Claude judge: versioned prompts in the request, cached calls, votes, bad replies → NaN."""
from __future__ import annotations

import json
import math
import re
import warnings

import pytest

from ragkit import standin
from ragkit.answer_metrics import context_precision, faithfulness, score_judged
from ragkit.cache import CallCache
from ragkit.documents import RagkitError, RagkitWarning
from ragkit.answer_judge import FAITHFULNESS, Judge, majority, parse_json
from ragkit.llm import LLM, UsageLog, make_client

CONTEXT = ["ETH2 has the fixed address 192.168.50.1/24.", "The RESET button is recessed."]
ANSWER = "ETH2 has the fixed address 192.168.50.1/24. It also speaks BACnet over Zigbee."


def _judge(handler=standin.respond, n=1, cache=None, requests=None):
    def recording(path, request):
        if requests is not None:
            requests.append(request)
        return handler(path, request)
    client = make_client(max_retries=0, transport=standin.transport(recording))
    return Judge(LLM(client, cache=cache, usage=UsageLog()), n=n)


def _replace_text(text_for):
    """A handler answering like the stand-in but with `text_for(task, sample, request)`."""
    def handle(path, request):
        status, body = standin.respond(path, request)
        user = request["messages"][0]["content"]
        task, sample = re.match(r"\[ragkit judge: (\w+) v\d+\] sample (\d+)", user).groups()
        replaced = text_for(task, int(sample), body["content"][0]["text"])
        if isinstance(replaced, tuple):
            replaced, body["stop_reason"] = replaced
        body["content"] = [{"type": "text", "text": replaced}]
        return status, body
    return handle


def test_the_stand_in_judges_by_word_overlap_end_to_end():
    # statement 1's words are all in the context; "speaks BACnet over Zigbee" is not.
    judge = _judge()
    assert faithfulness(judge, "What is ETH2's address?", ANSWER, CONTEXT) == 0.5
    assert judge.failures.total() == 0 and judge.asked == {"statements": 1, "faithfulness": 1}


def test_prompt_version_and_temperature_are_part_of_the_request():
    requests = []
    faithfulness(_judge(requests=requests), "q", ANSWER, CONTEXT)
    assert [r["messages"][0]["content"].splitlines()[0] for r in requests] == [
        "[ragkit judge: statements v1] sample 1", "[ragkit judge: faithfulness v1] sample 1"]
    assert {r["temperature"] for r in requests} == {0.0}
    voted = []
    faithfulness(_judge(n=3, requests=voted), "q", ANSWER, CONTEXT)
    assert [r["temperature"] for r in voted] == [0.0, 0.3, 0.3, 0.3]  # statements, 3 samples
    assert len({json.dumps(r, sort_keys=True) for r in voted}) == 4  # distinct cache keys


def test_a_rerun_is_served_from_the_call_cache(tmp_path):
    cache = CallCache(tmp_path / "calls.sqlite")
    requests = []
    first = faithfulness(_judge(cache=cache, requests=requests), "q", ANSWER, CONTEXT)
    again = _judge(cache=cache, requests=requests)
    assert faithfulness(again, "q", ANSWER, CONTEXT) == first == 0.5
    assert len(requests) == 2  # the second run sent nothing
    assert again.llm.usage.models["claude-haiku-4-5"].cache_hits == 2


def test_majority_vote_over_three_samples():
    # samples 1 and 3 say "not inferable" for statement 1, sample 2 says it is.
    def flip(task, sample, text):
        if task != "faithfulness":
            return text
        obj = json.loads(text)
        obj["verdicts"][0]["verdict"] = int(sample == 2)
        return json.dumps(obj)
    assert faithfulness(_judge(_replace_text(flip), n=3), "q", ANSWER, CONTEXT) == 0.0


def test_majority_is_nan_on_a_tie_or_no_valid_vote():
    assert majority([[1, 0], None, [0, 0]], 2) == [pytest.approx(math.nan, nan_ok=True), 0.0]
    assert math.isnan(majority([None, None, None], 1)[0])
    assert majority([[1], [1], [0]], 1) == [1.0]


@pytest.mark.parametrize("bad, reason", [
    (lambda text: "Sure! The statements are supported.", "no JSON object"),
    (lambda text: text[: len(text) // 2], "no JSON object|invalid JSON"),
    (lambda text: (text, "max_tokens"), "cut off at max_tokens"),
    (lambda text: '{"a": ' + "[" * 100_000 + "}", r"invalid JSON \(nested too deeply\)"),
    (lambda text: json.dumps({"verdicts": [{"statement": 1, "verdict": 1},
                                           {"statement": 7, "verdict": 1}]}),
     "unknown statement 7"),
    (lambda text: json.dumps({"verdicts": [{"statement": 1, "verdict": 1}]}),
     "no verdict for statement 2"),
    (lambda text: json.dumps({"verdicts": [{"statement": 1, "verdict": "maybe"},
                                           {"statement": 2, "verdict": 0}]}),
     "'maybe', not 0 or 1"),
])
def test_a_malformed_verdict_is_nan_with_a_warning_and_counted(bad, reason):
    def handle(task, sample, text):
        return bad(text) if task == "faithfulness" else text
    judge = _judge(_replace_text(handle))
    with pytest.warns(RagkitWarning, match=reason):
        assert math.isnan(faithfulness(judge, "q", ANSWER, CONTEXT))
    assert judge.failures == {"faithfulness": 1}


def test_a_malformed_reply_is_not_cached_so_the_next_run_asks_again(tmp_path):
    cache = CallCache(tmp_path / "calls.sqlite")
    garbled = _replace_text(lambda task, sample, text: "{" if task == "faithfulness" else text)
    with pytest.warns(RagkitWarning):
        faithfulness(_judge(garbled, cache=cache), "q", ANSWER, CONTEXT)
    assert faithfulness(_judge(cache=cache), "q", ANSWER, CONTEXT) == 0.5


def test_the_run_goes_on_past_bad_replies_and_shows_the_count():
    # Every context-precision reply names no verdict: NaN for those items, numbers elsewhere.
    judge = _judge(_replace_text(
        lambda task, sample, text: '{"reason": "?"}' if task == "context_precision" else text))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = score_judged(judge, {"a": "q", "b": "q"}, {"a": ANSWER, "b": ANSWER},
                             {"a": CONTEXT, "b": CONTEXT}, {"a": CONTEXT[0]}, _OneEmbedder())
    assert table["faithfulness"].tolist() == [0.5, 0.5]
    assert table["context_precision"].isna().all()
    assert table.loc["a", "context_recall"] == 1.0 and math.isnan(table.loc["b", "context_recall"])
    assert judge.failures["context_precision"] == 2 == len(
        [w for w in caught if "context_precision" in str(w.message)])
    assert "context_precision 2/2 failed" in judge.summary()


def test_an_api_failure_is_not_mistaken_for_a_bad_verdict():
    def down(path, request):
        return 500, {"type": "error", "error": {"type": "api_error", "message": "down"}}
    with pytest.raises(RagkitError, match="kept failing"):
        context_precision(_judge(down), "q", CONTEXT, "x")


def test_even_sample_counts_are_refused():
    with pytest.raises(RagkitError, match="odd number"):
        Judge(LLM(make_client(transport=standin.transport()), cache=None), n=2)


def test_json_is_found_inside_code_fences_and_words():
    assert parse_json('Here:\n```json\n{"verdict": 1}\n```') == {"verdict": 1}
    assert FAITHFULNESS.render(0, context="c").startswith("[ragkit judge: faithfulness v1]")


class _OneEmbedder:
    """Every text → the same unit vector (cosine 1)."""

    def embed(self, texts, *, input_type="document", progress=False):
        import numpy as np
        return np.ones((len(texts), 1), dtype=np.float32)
