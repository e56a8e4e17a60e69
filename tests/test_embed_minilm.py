"""all-MiniLM-L6-v2 on ONNX Runtime: recorded reference values, invariants, and (when torch and
sentence-transformers are importable) parity with sentence-transformers on real chunks.

The reference vectors in tests/data/minilm_reference.npz were recorded once from
sentence-transformers (tests/data/record_minilm_reference.py), so parity is checked without
torch: a text past 256 word-pieces (truncation) and a batch of mixed lengths.
Tests that need the model skip with a pointer to `ragkit models install`.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from recorded_vectors import load_recorded

from ragkit import models
from ragkit.documents import RagkitError
from ragkit.embed.minilm import MiniLM

RECORDED = Path(__file__).resolve().parent / "data" / "minilm_reference.npz"
COOKBOOK = Path(__file__).resolve().parents[1].parent / "shared/data/cookbook/codebase_chunks.json"

# Recorded from sentence-transformers 6.2.0 / torch 2.13.0 (CPU) on the installed model:
# dims 0, 1, 2, 3, 100, 383 of the normalised embedding.
DIMS = [0, 1, 2, 3, 100, 383]
REFERENCE = {
    "A man is eating food.": [0.033242, 0.004406, -0.006277, 0.048379, -0.006087, -0.037564],
    "": [-0.118838, 0.048299, -0.002548, -0.011011, 0.035949, -0.015717],
    "The quick brown fox jumps over the lazy dog.":
        [0.043934, 0.058934, 0.048178, 0.077548, 0.013113, 0.102064],
}


@pytest.fixture(scope="module")
def model() -> MiniLM:
    try:
        return MiniLM()
    except RagkitError as err:
        pytest.skip(f"all-MiniLM-L6-v2 is not installed (run `ragkit models install`): {err}")


def test_reference_values(model: MiniLM) -> None:
    vectors = model.embed(list(REFERENCE))
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
    np.testing.assert_allclose(vectors[:, DIMS], np.array(list(REFERENCE.values())), atol=1e-5)


@pytest.fixture(scope="module")
def recorded() -> dict:
    return load_recorded(RECORDED)


def test_recorded_reference_is_from_the_pinned_model(recorded: dict) -> None:
    """The file covers truncation and mixed lengths, and was made from the weights ragkit pins."""
    vectors, full = recorded["vectors"], recorded["full_tokens"]
    assert vectors.dtype == np.float32 and vectors.shape == (len(recorded["texts"]), 384)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
    assert recorded["versions"]["model.safetensors sha256"] == \
        models.MODEL_FILES["model.safetensors"]
    assert full.max() > 2 * MiniLM.max_tokens  # past the 512 positions, too
    assert {MiniLM.max_tokens, MiniLM.max_tokens + 1, 2} <= set(full.tolist())
    assert recorded["kept_tokens"].tolist() == np.minimum(full, MiniLM.max_tokens).tolist()


def _assert_matches_recorded(ours: np.ndarray, recorded: dict) -> None:
    theirs = recorded["vectors"]
    diff = np.abs(ours - theirs).max(axis=1)
    worst = int(diff.argmax())
    assert diff[worst] <= 1e-5, f"text {worst} ({recorded['texts'][worst][:40]!r}): {diff[worst]}"
    assert (ours.astype(np.float64) * theirs).sum(axis=1).min() >= 0.99999


def test_batch_matches_recorded_sentence_transformers(model: MiniLM, recorded: dict) -> None:
    """One call, as recorded (texts of very different lengths: sentence-transformers padded
    them, ragkit runs one text a call): measured max abs difference 1.9e-7, min cosine
    0.9999997. One text a call gives the same vectors (the batch-independence test below)."""
    _assert_matches_recorded(model.embed(recorded["texts"]), recorded)


def test_truncation_matches_sentence_transformers(model: MiniLM, recorded: dict) -> None:
    """Texts past 256 word-pieces keep what sentence-transformers keeps: the first 255, [SEP]."""
    texts, full = recorded["texts"], recorded["full_tokens"]
    assert model.token_lengths(texts) == full.tolist()
    long = np.flatnonzero(full > model.max_tokens)
    assert len(long) == 2
    ours = model.embed([texts[i] for i in long])
    np.testing.assert_allclose(ours, recorded["vectors"][long], atol=1e-5, rtol=0)


def test_paraphrase_scores_above_unrelated(model: MiniLM) -> None:
    a, same, para, other = model.embed([
        "A man is eating food.", "A man is eating food.",
        "A man is eating a piece of bread.", "A cheetah is running behind its prey.",
    ])
    assert a @ same == pytest.approx(1.0, abs=1e-6)
    assert a @ para > 0.7 > 0.2 > a @ other


def test_batch_equals_single(model: MiniLM) -> None:
    texts = ["short", "a somewhat longer sentence about retrieval and ranking", "",
             "def f(x):\n    return x * 2  # code " * 5, "word " * 300]
    batch = model.embed(texts)
    for text, row in zip(texts, batch, strict=True):
        np.testing.assert_allclose(model.embed([text])[0], row, atol=1e-6)


def test_measuring_texts_does_not_load_the_runtime(model: MiniLM) -> None:
    # a build whose vectors are all cached only measures its windows: no ~3 s session load
    fresh = MiniLM()
    assert fresh.token_lengths(["hello world"]) == [4] and fresh.session is None
    assert fresh.embed([]).shape == (0, 384) and fresh.session is None
    np.testing.assert_array_equal(fresh.embed(["hello world"]), model.embed(["hello world"]))
    assert fresh.session is not None
    # every MiniLM of a process shares one session and tokenizer (a notebook builds many
    # pipelines; each built its own session again, ~1.4 s)
    assert fresh.session is model.session and fresh.tokenizer is model.tokenizer


def test_token_lengths_and_truncation(model: MiniLM) -> None:
    assert model.token_lengths(["", "hello world", "word " * 300]) == [2, 4, 302]
    long = " ".join(f"w{i}" for i in range(400))
    assert model.token_lengths([long])[0] > model.max_tokens == 256
    # Only the first 254 word-pieces (+ [CLS], [SEP]) count: a different tail changes nothing.
    a, b = model.embed([long, long + " a completely different ending about cheetahs"])
    np.testing.assert_allclose(a, b, atol=1e-6)


def test_query_and_document_alike_and_empty_input(model: MiniLM) -> None:
    q = model.embed(["what is bm25"], input_type="query")
    np.testing.assert_array_equal(q, model.embed(["what is bm25"], input_type="document"))
    assert model.embed([]).shape == (0, 384)
    with pytest.raises(RagkitError, match="input_type"):
        model.embed(["x"], input_type="passage")


def _parity_texts() -> list[str]:
    if COOKBOOK.is_file():
        chunks = [c["content"] for doc in json.loads(COOKBOOK.read_text()) for c in doc["chunks"]]
        return [c[:300] for c in chunks[:240]] + chunks[240:250]  # 10 past 256 word-pieces
    rng = np.random.default_rng(0)
    words = "the model retrieves chunks and ranks them by cosine similarity to a query".split()
    return [" ".join(rng.choice(words, size=n)) for n in rng.integers(1, 300, size=250)]


def test_parity_with_sentence_transformers(model: MiniLM, monkeypatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    pytest.importorskip("torch")
    st = pytest.importorskip("sentence_transformers")
    reference = st.SentenceTransformer(str(model.folder), device="cpu")
    assert reference.max_seq_length == model.max_tokens
    texts = _parity_texts()
    ours, theirs = model.embed(texts), reference.encode(texts, batch_size=32)
    assert np.abs(ours - theirs).max() < 1e-5
    assert (ours * theirs).sum(axis=1).min() >= 0.9999


def _mixed_texts(n: int = 48) -> list[str]:
    """Texts of 3 to 60 words, several of each length, so batches hold more than one text."""
    rng = np.random.default_rng(7)
    words = ("the retrieval model ranks chunks of long documents by their cosine similarity "
             "to a question and fuses the result with bm25 scores").split()
    return [" ".join(rng.choice(words, size=int(k))) for k in rng.integers(3, 60, size=n)]


def test_a_texts_vector_does_not_depend_on_its_batch(model: MiniLM) -> None:
    # The embedding cache keeps whichever vector a text got first, so a vector that changed
    # with the texts embedded beside it would make results depend on run order.
    texts = _mixed_texts()
    together = model.embed(texts)
    alone = np.stack([model.embed([t])[0] for t in texts])
    others = model.embed(texts[::-3] + ["an unrelated sentence of seven words"])
    assert np.array_equal(together, alone)
    assert np.array_equal(others[:-1], alone[::-3])
