"""CachedEmbedder and the embedder registry, with a tiny deterministic fake embedder."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Sequence

import numpy as np
import pytest

from ragkit import embed
from ragkit.documents import RagkitError
from ragkit.embed import CachedEmbedder, Embedder, fingerprint_of, get_embedder
from ragkit.embed.cache import cache_key, remove_cache


class Fake:
    """Vector = normalised first 4 bytes of sha256(input_type + text); records its calls."""

    name, dim = "fake", 4

    def __init__(self, fail_after: int | None = None, fingerprint: str = "weights-v1",
                 max_tokens: int = 16) -> None:
        self.calls: list[list[str]] = []
        self.fail_after = fail_after
        self.fingerprint, self.max_tokens = fingerprint, max_tokens

    def embed(self, texts: Sequence[str], *, input_type: str = "document",
              progress: bool = False) -> np.ndarray:
        if self.fail_after is not None and len(self.calls) >= self.fail_after:
            raise KeyboardInterrupt("simulated interruption")
        self.calls.append(list(texts))
        return np.array([vector(t, input_type) for t in texts], dtype=np.float32).reshape(-1, 4)

    def token_lengths(self, texts: Sequence[str]) -> list[int]:
        return [len(t.split()) + 2 for t in texts]


def vector(text: str, input_type: str = "document") -> np.ndarray:
    raw = np.frombuffer(hashlib.sha256((input_type + text).encode()).digest()[:4], np.uint8)
    v = raw.astype(np.float32) + 1
    return v / np.linalg.norm(v)


def test_fake_follows_protocol() -> None:
    assert isinstance(Fake(), Embedder)


def test_order_duplicates_and_hits(tmp_path) -> None:
    inner = Fake()
    cached = CachedEmbedder(inner, tmp_path / "e.sqlite")
    texts = ["b b b", "a", "c c", "a"]
    out = cached.embed(texts)
    np.testing.assert_array_equal(out, [vector(t) for t in texts])
    assert inner.calls == [["a", "c c", "b b b"]]  # unique texts, shortest first
    again = cached.embed(["c c", "a", "b b b"])
    np.testing.assert_array_equal(again, [vector(t) for t in ["c c", "a", "b b b"]])
    assert len(inner.calls) == 1  # all hits: the model was not called
    cached.embed(["a", "new"])
    assert inner.calls[1] == ["new"]


def test_persists_across_instances_and_keys_on_input_type(tmp_path) -> None:
    CachedEmbedder(Fake(), tmp_path / "e.sqlite").embed(["x"])
    inner = Fake()
    cached = CachedEmbedder(inner, tmp_path / "e.sqlite")
    cached.embed(["x"])
    assert inner.calls == []
    np.testing.assert_array_equal(cached.embed(["x"], input_type="query")[0], vector("x", "query"))
    assert inner.calls == [["x"]]


def test_changed_weights_or_truncation_miss_and_the_same_ones_hit(tmp_path) -> None:
    CachedEmbedder(Fake(), tmp_path / "e.sqlite").embed(["x"])
    for changed in (Fake(fingerprint="weights-v2"), Fake(max_tokens=8)):
        CachedEmbedder(changed, tmp_path / "e.sqlite").embed(["x"])
        assert changed.calls == [["x"]]  # a miss: the changed model embeds the text again
    same = Fake()
    CachedEmbedder(same, tmp_path / "e.sqlite").embed(["x"])
    assert same.calls == []  # a hit: same name, fingerprint and max_tokens
    with sqlite3.connect(tmp_path / "e.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0] == 3


def test_cache_key_is_the_sha256_of_the_json_list() -> None:
    payload = '["fake", "weights-v1", 16, "query", "x"]'
    assert cache_key("fake", "weights-v1", 16, "query", "x") == \
        hashlib.sha256(payload.encode()).hexdigest()


def test_an_embedder_without_fingerprint_is_keyed_by_name(tmp_path) -> None:
    class Legacy(Fake):  # written before embedders had a fingerprint
        def __init__(self) -> None:
            super().__init__()
            del self.fingerprint

    assert fingerprint_of(Legacy()) == "fake" and fingerprint_of(Fake()) == "weights-v1"
    cached = CachedEmbedder(Legacy(), tmp_path / "e.sqlite")
    assert cached.fingerprint == "fake"
    cached.embed(["x"])
    hit = Legacy()
    CachedEmbedder(hit, tmp_path / "e.sqlite").embed(["x"])
    assert hit.calls == []


def test_interrupted_run_keeps_finished_batches(tmp_path) -> None:
    texts = [f"text {i}" for i in range(5)]
    with pytest.raises(KeyboardInterrupt):
        CachedEmbedder(Fake(fail_after=1), tmp_path / "e.sqlite", batch_size=2).embed(texts)
    inner = Fake()
    out = CachedEmbedder(inner, tmp_path / "e.sqlite", batch_size=2).embed(texts)
    np.testing.assert_array_equal(out, [vector(t) for t in texts])
    assert inner.calls == [["text 2", "text 3"], ["text 4"]]  # the first batch was kept


def _interrupt_at_third(ids: list[int]) -> np.ndarray:
    if ids == [3]:
        raise KeyboardInterrupt("Ctrl-C")
    return np.zeros(4, np.float32)


@pytest.mark.parametrize("run", ["cache", "embed_each"])
def test_ctrl_c_closes_the_progress_bar_before_the_interrupted_line(tmp_path, capsys, run):
    """A bar left open was drawn again when it was collected, after the CLI's "ragkit:
    interrupted" line (seen in a terminal during `ragkit index`)."""
    import gc
    from ragkit.embed.minilm import embed_each
    with pytest.raises(KeyboardInterrupt):
        if run == "cache":
            CachedEmbedder(Fake(fail_after=1), tmp_path / "e.sqlite", batch_size=2).embed(
                [f"text {i}" for i in range(5)], progress=True)
        else:
            embed_each([[1], [2], [3], [4]], 8, _interrupt_at_third, 4, 1, "embed x", True)
    drawn = capsys.readouterr().err
    gc.collect()
    assert "2/" in drawn.rsplit("\r", 1)[-1] and drawn.endswith("\n")  # closed where it stood
    assert capsys.readouterr().err == ""  # nothing drawn after the interruption was handled


def test_sqlite_file_uses_wal(tmp_path) -> None:
    CachedEmbedder(Fake(), tmp_path / "e.sqlite").embed(["x"])
    with sqlite3.connect(tmp_path / "e.sqlite") as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert db.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0] == 1


def test_empty_input_and_progress(tmp_path) -> None:
    cached = CachedEmbedder(Fake(), tmp_path / "e.sqlite")
    assert cached.embed([]).shape == (0, 4)
    assert cached.embed(["p q"], progress=True).shape == (1, 4)
    assert (cached.name, cached.dim, cached.max_tokens, cached.fingerprint,
            cached.token_lengths(["p q"])) == ("fake", 4, 16, "weights-v1", [4])


def test_default_cache_path_under_ragkit_home(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("RAGKIT_HOME", str(tmp_path))
    assert embed.default_cache_path() == tmp_path / "cache" / "embeddings.sqlite"


def test_get_embedder_wraps_with_cache(tmp_path, monkeypatch) -> None:
    monkeypatch.setitem(embed.EMBEDDERS, "fake", Fake)
    monkeypatch.setenv("RAGKIT_HOME", str(tmp_path))
    assert isinstance(get_embedder("fake", cache=False), Fake)
    cached = get_embedder("fake")
    assert isinstance(cached, CachedEmbedder)
    assert cached.path == tmp_path / "cache" / "embeddings.sqlite"
    assert get_embedder("fake", cache=tmp_path / "other.sqlite").path == tmp_path / "other.sqlite"


def test_unknown_embedder_lists_known_names() -> None:
    with pytest.raises(RagkitError, match=r"unknown embedder 'nope'.*minilm"):
        get_embedder("nope")


def test_auto_shares_minilms_cached_vectors(tmp_path):
    """`auto` caches each routed model by itself, so English text embedded once by `minilm`
    is not embedded again by `auto` (and vice versa)."""
    import sqlite3

    from ragkit import models
    from ragkit.embed import get_embedder
    if not models.model_dir().is_dir():
        pytest.skip("model not installed: run `ragkit models install`")
    path = tmp_path / "cache.sqlite"
    first = get_embedder("minilm", cache=path).embed(["the refund window is 21 days"])
    rows = sqlite3.connect(path).execute("SELECT COUNT(*) FROM embeddings").fetchone()[0]
    second = get_embedder("auto", cache=path).embed(["the refund window is 21 days"])
    assert sqlite3.connect(path).execute("SELECT COUNT(*) FROM embeddings").fetchone()[0] == rows
    np.testing.assert_array_equal(second[0, :384], first[0])


def test_kept_connections_serve_every_thread_and_see_other_writers(tmp_path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    path = tmp_path / "e.sqlite"
    first, second = CachedEmbedder(Fake(), path), CachedEmbedder(Fake(), path)
    first.embed(["a"])  # opens first's connection in this thread
    with ThreadPoolExecutor(2) as pool:  # other threads open their own
        rows = list(pool.map(lambda t: first.embed([t])[0], ["a", "b", "c"]))
    np.testing.assert_array_equal(np.stack(rows), [vector("a"), vector("b"), vector("c")])
    assert sorted(first.inner.calls) == [["a"], ["b"], ["c"]]  # "a" once, from the cache after
    second.embed(["d"])  # written through another open connection ...
    first.embed(["d"])
    assert first.inner.calls.count(["d"]) == 0  # ... is found by this one


class SlowFake(Fake):
    """Fake that takes 0.2 s a call and appends each text it embeds to a log file."""

    def __init__(self, log) -> None:
        super().__init__()
        self.log = log

    def embed(self, texts: Sequence[str], **options) -> np.ndarray:
        import time
        with open(self.log, "a") as f:
            f.writelines(t + "\n" for t in texts)
        time.sleep(0.2)
        return super().embed(texts, **options)


def _embed_after(barrier, path, log, texts) -> None:
    cached = CachedEmbedder(SlowFake(log), path, batch_size=2)
    barrier.wait()  # both processes look the texts up at the same moment
    cached.embed(texts)


def test_two_processes_embed_each_text_once(tmp_path) -> None:
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    path, log = tmp_path / "e.sqlite", tmp_path / "embedded.txt"
    texts = ["a", "b b", "c c c", "d d d d", "e e e e e", "f f f f f f"]
    CachedEmbedder(Fake(), path)  # create the schema before the race
    barrier = ctx.Barrier(2)
    workers = [ctx.Process(target=_embed_after, args=(barrier, path, log, texts))
               for _ in range(2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(30)
    assert [w.exitcode for w in workers] == [0, 0]
    assert sorted(log.read_text().splitlines()) == sorted(texts)  # not twice each
    np.testing.assert_array_equal(CachedEmbedder(Fake(), path).embed(texts),
                                  [vector(t) for t in texts])


@pytest.mark.parametrize("blob", [b"\x00\x00\xc0\x7f" * 4, b"\x00" * 10, b"\x00" * 16],
                         ids=["NaN", "10 bytes", "all zero"])
def test_a_damaged_vector_in_the_cache_is_embedded_again(tmp_path, blob) -> None:
    """A NaN row built an index that search calls damaged, and rebuilding read the same row
    again; a 10-byte row raised ValueError; an all-zero row scored every chunk 0."""
    inner = Fake()
    cached = CachedEmbedder(inner, tmp_path / "e.sqlite")
    cached.embed(["a", "b"])
    with sqlite3.connect(tmp_path / "e.sqlite") as db:
        db.execute("UPDATE embeddings SET vector = ?", (blob,))
    fresh = CachedEmbedder(inner, tmp_path / "e.sqlite")
    np.testing.assert_array_equal(fresh.embed(["a", "b"]), [vector("a"), vector("b")])
    assert inner.calls[-1] == ["a", "b"]  # both embedded again, and stored right this time
    again = CachedEmbedder(inner, tmp_path / "e.sqlite")
    again.embed(["a", "b"])
    assert len(inner.calls) == 2


def test_a_cache_cleared_after_it_was_opened_starts_again(tmp_path) -> None:
    # `ragkit cache clear --embeddings` run while a search was starting: the search's first
    # query failed "the embedding cache cannot be used (no such table: embeddings)"
    path = tmp_path / "e.sqlite"
    cached = CachedEmbedder(Fake(), path)
    assert remove_cache(path) > 0 and not path.exists()
    assert cached.embed(["a", "b"]).shape == (2, 4)
    assert CachedEmbedder(Fake(), path).embed(["a"]).shape == (1, 4)
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT count(*) FROM embeddings").fetchone() == (2,)


def test_the_embed_bar_shows_before_the_texts_are_measured(tmp_path, capsys) -> None:
    """The texts to embed are measured in the model's tokens to batch similar lengths; for
    300,000 windows that took about 40 s with nothing on the screen before the `embed` bar."""
    seen: list[str] = []

    class Measured(Fake):
        def token_lengths(self, texts: Sequence[str]) -> list[int]:
            seen.append(capsys.readouterr().err)
            return super().token_lengths(texts)

    cached = CachedEmbedder(Measured(), tmp_path / "c.sqlite")
    cached.embed(["one text", "two more texts"], progress=True)
    assert len(seen) == 1 and "embed fake:   0%|          | 0/2" in seen[0]
