"""Which program answers Claude calls: the real API with a key, else the registered offline
backend (the stand-in, registered by `import ragkit`), else one clear error line."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import httpx2
import pytest

from ragkit import llm_backends
from ragkit.documents import RagkitError
from ragkit.llm import LLM, make_client

HAIKU = "claude-haiku-4-5"


@pytest.fixture
def registry(monkeypatch):
    """An empty offline-backend registry for the test (the real one is restored after)."""
    monkeypatch.setattr(llm_backends, "_factory", [])
    monkeypatch.setattr(llm_backends, "_loaded", {})
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    return llm_backends


def _python(code: str, **env: str) -> dict:
    """Run `code` in a fresh interpreter (no key unless given); its last line is JSON."""
    environ = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"} | env
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=environ, timeout=120, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_without_a_key_or_an_offline_backend_the_error_is_one_line(registry):
    with pytest.raises(RagkitError) as caught:
        make_client()
    assert str(caught.value) == (
        "no ANTHROPIC_API_KEY is set and no offline backend is registered: set the key, "
        "or register one with ragkit.llm_backends.register_offline")


def test_a_registered_backend_answers_and_is_made_once_on_first_use(registry):
    made = []

    def reply(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, json={
            "id": llm_backends.OFFLINE_ID_PREFIX + "1", "type": "message", "role": "assistant",
            "model": HAIKU, "content": [{"type": "text", "text": "from the test backend"}],
            "stop_reason": "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": 3, "output_tokens": 4}})

    def factory() -> llm_backends.OfflineBackend:
        made.append(1)
        return llm_backends.OfflineBackend("test backend", lambda: httpx2.MockTransport(reply),
                                           lambda: "v1")

    registry.register_offline(factory)
    assert made == []  # registering loads nothing
    llm = LLM(cache=None)
    second = LLM(cache=None)
    message = llm.create(model=HAIKU, max_tokens=10, messages=[{"role": "user", "content": "hi"}])
    assert message.content[0].text == "from the test backend"
    assert (llm.source, llm.backend, second.backend) == ("test backend", "test-backend@v1",
                                                         "test-backend@v1")
    assert made == [1]


def test_import_ragkit_loads_neither_the_stand_in_nor_the_sdk():
    found = _python("import json, sys, ragkit; print(json.dumps("
                    "[m for m in ('ragkit.standin', 'anthropic') if m in sys.modules]))")
    assert found == []


def test_the_online_path_never_loads_the_stand_in():
    found = _python(
        "import json, sys; from ragkit.llm import LLM, make_client; llm = LLM(make_client());"
        "print(json.dumps([llm.offline, llm.source, 'ragkit.standin' in sys.modules]))",
        ANTHROPIC_API_KEY="sk-test", ANTHROPIC_BASE_URL="http://127.0.0.1:9")
    assert found == [False, "the Anthropic API at http://127.0.0.1:9", False]


def test_without_a_key_a_fresh_process_gets_the_stand_in_with_no_set_up():
    found = _python(
        "import json; from ragkit.llm import LLM; llm = LLM(cache=None);"
        "reply = llm.create(model='claude-haiku-4-5', max_tokens=50,"
        " messages=[{'role': 'user', 'content': 'hello'}]);"
        "print(json.dumps([llm.source, reply.content[0].text]))")
    assert found == ["offline stand-in", "The offline stand-in has no rule for this request."]
