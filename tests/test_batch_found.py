"""The batch an unanswered submit made is the one found again: never an older batch of the same
size — one another run collected a minute before, or another command's open batch — whose
adoption left the batch made uncollected (paid for) and its requests sent again at full price;
and a batch found is journaled before the submit's record is dropped."""
from __future__ import annotations

import json
import subprocess
from datetime import datetime, timezone
from pathlib import Path
from types import SimpleNamespace

import pytest

from ragkit.batch_journal import BatchRecord, Journal
from ragkit.batch_submit import PENDING, found, pending, recover
from test_message_batches import RAGKIT, _chunks, _docs, _env, server  # noqa: F401 (fixture)


def _index(tmp_path: Path, server, docs: Path, out: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(RAGKIT), "index", str(docs), "--out", str(tmp_path / out), "--contextualizer",
         "claude", "--batch", "--embedder", "none", "--chunk-size", "64", "--overlap", "0",
         "--batch-poll", "0.3"], env=_env(tmp_path, server), capture_output=True, text=True,
        timeout=120)


@pytest.mark.parametrize("server", [(0.5, -1, "made500second")], indirect=True)
def test_a_submit_answered_with_a_500_finds_its_own_batch_not_an_older_one(tmp_path, server):
    first = _index(tmp_path, server, _docs(tmp_path / "docs.jsonl"), "first")
    assert first.returncode == 0, first.stderr  # msgbatch_0001, collected
    other = tmp_path / "other.jsonl"  # as many chunks, other words: each paragraph reversed
    other.write_text("".join(
        json.dumps({**doc, "id": doc["id"] + "-b", "text": "\n\n".join(
            " ".join(p.rstrip(".").split()[::-1]) + "." for p in doc["text"].split("\n\n"))})
        + "\n" for doc in map(json.loads, (tmp_path / "docs.jsonl").read_text().splitlines())))
    second = _index(tmp_path, server, other, "second")
    assert second.returncode == 0, second.stderr
    assert "batch msgbatch_0002: made by an unanswered submit; collected" in second.stderr
    assert not server.calls("POST", "/v1/messages")  # nothing sent again at full price
    chunks = _chunks(tmp_path / "second")
    assert len(chunks) == 8
    assert all(c["context"] == ("batched: " + c["text"][:60]).strip() for c in chunks)


def _batch(batch_id: str, created: str, size: int) -> SimpleNamespace:
    counts = SimpleNamespace(to_dict=lambda: {"processing": 0, "succeeded": size})
    return SimpleNamespace(id=batch_id, request_counts=counts,
                           created_at=datetime.fromisoformat(created).replace(
                               tzinfo=timezone.utc))


class Listed:
    """`client.messages.batches` holding `listed`, newest first."""

    def __init__(self, *listed: SimpleNamespace) -> None:
        self.listed = list(listed)

    def list(self, limit: int = 20) -> "Page":
        return Page(self.listed[:limit])


class Page(list):
    """A page of the list, as the SDK's: iterated, or its `data`."""

    @property
    def data(self) -> list:
        return list(self)


def test_only_batches_made_since_the_submit_began_and_journaled_by_no_record_are_found(
        tmp_path):
    journal = Journal("anthropic", "http://api", folder=tmp_path / "journal")
    before = Listed(_batch("msgbatch_old", "2026-12-07T10:00:00", 2))
    marker = pending("http://api", ["a", "b"], before)
    assert marker.extra == {"after": "msgbatch_old"}
    now = marker.created_at.rstrip("Z")
    # the older batch of the same size, collected just before, was taken
    assert found(Listed(_batch("msgbatch_old", now, 2)), marker, set(), journal) is None
    mine, others = _batch("msgbatch_mine", now, 2), _batch("msgbatch_open", now, 2)
    journal.write(BatchRecord("anthropic", "http://other", "msgbatch_open", ["x", "y"]))
    listed = Listed(others, mine, _batch("msgbatch_old", now, 2))  # another command's, newer
    assert found(listed, marker, set(), journal) == "msgbatch_mine"
    assert found(listed, marker, {"msgbatch_mine"}, journal) is None
    assert pending("http://api", ["a"], Listed()).extra == {"after": ""}


def test_a_found_batch_is_journaled_before_the_submits_record_is_dropped(tmp_path,
                                                                          monkeypatch):
    journal = Journal("anthropic", "http://api", folder=tmp_path / "journal")
    marker = pending("http://api", ["a", "b"], Listed())
    journal.write(marker)
    assert marker.status == PENDING

    def killed(record):  # a kill -9 while the batch found is being journaled
        raise KeyboardInterrupt
    monkeypatch.setattr(journal, "write", killed)
    listed = Listed(_batch("msgbatch_mine", marker.created_at.rstrip("Z"), 2))
    with pytest.raises(KeyboardInterrupt):
        recover([marker], listed, journal, None, print)
    assert journal.path(marker.id).exists()  # the next run looks again


def test_a_journal_whose_api_cannot_list_batches_says_how_to_go_on(tmp_path):
    """Every re-run stopped on the failed lookup, saying nothing of the way out."""
    import anthropic
    import httpx2
    from ragkit.documents import RagkitError
    journal = Journal("anthropic", "http://api", folder=tmp_path / "journal")
    marker = pending("http://api", ["a"], Listed())
    journal.write(marker)

    class Unlisted:
        def list(self, limit: int = 20):
            raise anthropic.NotFoundError("Not Found", response=httpx2.Response(
                404, request=httpx2.Request("GET", "http://api/v1/messages/batches")),
                body=None)
    client = anthropic.Anthropic(api_key="k", base_url="http://api")
    with pytest.raises(RagkitError) as caught:
        recover([marker], Unlisted(), journal, client, print)
    assert str(caught.value).endswith(
        "; where the API cannot list batches, delete that file to send its requests (a batch "
        "it made is then paid for again)")
    assert str(journal.path(marker.id)) in str(caught.value) and journal.path(marker.id).exists()


def test_a_record_left_beside_the_batch_it_found_is_dropped_with_a_true_line(tmp_path):
    """Killed between journaling the batch found and dropping the submit's record: the next
    run said "made no batch; its requests are sent now", though the batch's record held them
    and nothing was sent."""
    journal = Journal("anthropic", "http://api", folder=tmp_path / "journal")
    marker = pending("http://api", ["a", "b"], Listed())
    adopted = BatchRecord("anthropic", "http://api", "msgbatch_mine", ["a", "b"])
    journal.write(marker)
    journal.write(adopted)
    lines: list[str] = []
    assert recover([marker, adopted], Listed(), journal, None, lines.append) == [adopted]
    assert lines == [f"the submit of {marker.created_at} that got no answer made batch "
                     f"msgbatch_mine, already journaled"]
    assert not journal.path(marker.id).exists() and journal.path(adopted.id).exists()
