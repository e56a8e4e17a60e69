"""A reply that reported no usage is kept in the call cache as one whose tokens are unknown,
not as 0 tokens: `ragkit cache stats` (another process) says how many such replies each model
has and leaves them out of its sums, a hit on one is an unreported reply again, and a cache
file made before the mark gets its column and is read as before, read-only too."""
from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import httpx2

from ragkit.cache import CallCache
from ragkit.llm import LLM, UsageLog, make_client
from test_cache_batch_prices import old_cache
from test_cache_read_only_media import mountable, python  # noqa: F401 (a fixture)

RAGKIT = Path(sys.executable).parent / "ragkit"
HAIKU = "claude-haiku-4-5"
REPLY = {"id": "msg_1", "type": "message", "role": "assistant", "model": HAIKU,
         "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn",
         "stop_sequence": None}
NOTE = ("claude-haiku-4-5 /v1/messages: 1 reply reported no usage: their tokens and cost "
        "are unknown, not in these figures")


def _stats(home: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    return subprocess.run([str(RAGKIT), "cache", "stats"], env={**env, "RAGKIT_HOME": str(home)},
                          capture_output=True, text=True, timeout=60)


def _ask(llm: LLM, text: str):
    return llm.create(model=HAIKU, max_tokens=50,
                      messages=[{"role": "user", "content": text}])


def test_cache_stats_names_replies_without_usage_and_sums_only_the_others(tmp_path):
    home = tmp_path / "home"
    usage = {"one": None, "two": {"input_tokens": 1000, "output_tokens": 10}}
    sent = []

    def handler(request):
        text = request.read().decode()
        word = "one" if '"one"' in text else "two"
        sent.append(word)
        return httpx2.Response(200, json={**REPLY, "usage": usage[word]})

    log = UsageLog()
    llm = LLM(make_client(max_retries=0, transport=httpx2.MockTransport(handler)),
              cache=CallCache(home / "cache" / "calls.sqlite"), usage=log)
    for text in ("one", "two", "one"):
        assert _ask(llm, text).content[0].text == "ok"
    assert sent == ["one", "two"]  # the third from the cache
    # the hit on the reply without usage is one more reply of unknown size: its saving is
    # unknown too, never "$0.00 saved" read as measured
    assert log.summary().endswith("tokens in 1,000, out 10, cache write 0, cache read 0; "
                                  "$0.00105, $0.00 saved; 2 replies reported no usage: their "
                                  "tokens and cost are unknown, not in these figures")
    llm.cache.close()

    stats = _stats(home)
    assert stats.returncode == 0, stats.stderr
    row = next(line for line in stats.stdout.splitlines() if line.startswith(HAIKU + " "))
    # two replies stored, one hit; the tokens and dollars are the reported reply's alone
    assert row.split() == [HAIKU, "/v1/messages", "2", "1", "1,000", "10", "0", "0",
                           "$0.00105", "$0.00"]
    assert stats.stdout.rstrip().splitlines()[-1] == NOTE


def test_a_cache_made_before_the_mark_is_read_as_it_is_then_given_its_column(mountable):
    """On a read-only mount (nothing can be added) a hit is served from the old file, whose
    rows count as reporting their usage; where it can be written it gets its columns."""
    home = mountable / "home"
    path = old_cache(home / "cache" / "calls.sqlite")  # neither column
    read = python(home, "import sys\nfrom ragkit.cache import CallCache\n"
                        "cache = CallCache(sys.argv[1])\nentry = cache.get('old')\n"
                        "print(cache.read_only, entry.usage)", path, read_only=True)
    out, err = read.communicate(timeout=120)
    assert (read.returncode, out) == (0, "True Usage(input=1000, output=10, cache_write=0, "
                                         "cache_read=0, unreported=0)\n"), err
    stats = _stats(home)
    assert stats.returncode == 0, stats.stderr
    assert "reported no usage" not in stats.stdout and "$0.00105" in stats.stdout
    cache = CallCache(path)  # writable: the columns are added, the old row kept as it was
    entry = cache.get("old")
    assert entry is not None and (entry.usage.input, entry.usage.unreported) == (1000, 0)
    cache.close()
    with sqlite3.connect(path) as db:
        names = [row[1] for row in db.execute("PRAGMA table_info(calls)")]
    db.close()
    assert names[-2:] == ["batch", "unreported"]
