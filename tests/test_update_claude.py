"""`ragkit index --update` on an index whose contexts Claude wrote (the offline stand-in here),
run as a user runs it: the installed CLI, one process per command.

What Claude reads of a document is its text (the request holds the document block and the
chunk, `ragkit.contextualize.claude.build_request`); the title reaches the index through each
chunk's metadata (`title`, which labels passages in answer prompts and citations). So a title
changed alone must reach the index without a single request — even with the call cache
emptied — and a changed text must re-ask exactly that document's chunks."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

RAGKIT = Path(sys.executable).parent / "ragkit"
WORDS = "revenue margin quarter growth customer churn pipeline guidance segment".split()


def _write(path: Path, titles: dict[str, str], extra: str = "") -> None:
    rows = []
    for n, (doc_id, title) in enumerate(titles.items()):
        text = "\n\n".join(" ".join(WORDS[(i + j + n) % 9] for j in range(50)) + "."
                           for i in range(3))
        rows.append({"id": doc_id, "title": title, "text": text + (extra if doc_id == "b"
                                                                    else "")})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def _ragkit(home: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    env["RAGKIT_HOME"] = str(home)
    done = subprocess.run([str(RAGKIT), *args], env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return done


def _chunks(index: Path) -> list[dict]:
    return [json.loads(line) for line in (index / "chunks.jsonl").read_text().splitlines()]


def _requests(home: Path) -> int:
    """Messages requests sent since the call cache was last emptied (`ragkit cache stats`:
    a request answered by the cache is a hit, one sent is stored once, a miss)."""
    stats = _ragkit(home, "cache", "stats").stdout
    found = re.search(r"claude-haiku-4-5(?: \*)? +/v1/messages +(\d+) ", stats)
    return int(found[1]) if found else 0


def test_a_changed_title_reaches_the_index_without_asking_claude_again(tmp_path):
    docs, index, home = tmp_path / "docs.jsonl", tmp_path / "ix", tmp_path / "home"
    titles = {"a": "Alpha report", "b": "Beta memo", "c": "Gamma notes"}
    _write(docs, titles)
    _ragkit(home, "index", str(docs), "--out", str(index), "--contextualizer",
            "claude", "--embedder", "none", "--chunk-size", "64", "--overlap", "0")
    assert _requests(home) == 9  # 3 documents of 3 chunks
    before = _chunks(index)
    _ragkit(home, "cache", "clear")  # no call cache to answer for a re-asked request

    _write(docs, {**titles, "b": "Beta memo, revised"})
    done = _ragkit(home, "index", str(docs), "--out", str(index), "--update")
    assert "1 document added or changed, 0 removed, 2 unchanged" in done.stdout
    assert "the call cache is empty" in _ragkit(home, "cache", "stats").stdout
    after = _chunks(index)
    assert [c["metadata"]["title"] for c in after] == [
        "Alpha report"] * 3 + ["Beta memo, revised"] * 3 + ["Gamma notes"] * 3
    assert [(c["id"], c["text"], c["context"]) for c in after] == \
        [(c["id"], c["text"], c["context"]) for c in before]

    _write(docs, {**titles, "b": "Beta memo, revised"}, extra=" Churn rose.")
    done = _ragkit(home, "index", str(docs), "--out", str(index), "--update")
    assert "1 document added or changed, 0 removed, 2 unchanged" in done.stdout
    assert _requests(home) == 3  # b's chunks, and only those
    assert _chunks(index)[5]["text"].endswith("Churn rose.")
    # the update's own calls are said, as a build's are (it printed no usage at all)
    assert "ANTHROPIC_API_KEY is not set, so the offline stand-in answers" in done.stderr
    assert ("claude-haiku-4-5 (answered by the offline stand-in): 3 requests, 0 from the "
            "call cache;") in done.stdout


def test_a_title_change_keeps_the_vectors_and_equals_a_fresh_build(tmp_path, monkeypatch):
    """In process, with dense vectors: the retitled document is not embedded again, and the
    updated index is the one a fresh build of the new documents makes."""
    import numpy as np

    from ragkit.documents import Document
    from ragkit.pipeline import IndexConfig, Pipeline
    from ragkit.update import update_index
    from word_embedder import WordEmbedder

    monkeypatch.setenv("RAGKIT_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    _write(tmp_path / "docs.jsonl", {"a": "Alpha report", "b": "Beta memo"})
    docs = [Document(r["id"], r["text"], r["title"]) for r in
            map(json.loads, (tmp_path / "docs.jsonl").read_text().splitlines())]
    config = IndexConfig(chunk_size=64, overlap=0, contextualizer="claude",
                         embedder="word-test", tokenizer="words")
    embedder = WordEmbedder(WORDS)
    old = Pipeline.build(docs, config, progress=False, embedder=embedder)
    now = [docs[0], Document("b", docs[1].text, "Beta memo, revised")]
    calls = embedder.calls
    new, changed, removed = update_index(old, now)
    assert ([d.id for d in changed], removed, embedder.calls) == (["b"], [], calls)
    fresh = Pipeline.build(now, config, progress=False, embedder=WordEmbedder(WORDS))
    assert new.chunks == fresh.chunks
    np.testing.assert_array_equal(new.dense.owners, fresh.dense.owners)
    np.testing.assert_allclose(new.dense.vectors, fresh.dense.vectors, atol=1e-6)


def test_update_refuses_an_option_written_at_its_default_that_differs(tmp_path, monkeypatch,
                                                                       capsys):
    """`--update --chunk-size 512` on an index built with 64 was taken silently: 512 is the
    default, and a default could not be told from no option. Every option written is compared
    with the index's own (the Claude model and the prompt's text too); one left out is not."""
    from ragkit.cli import main
    monkeypatch.setenv("RAGKIT_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    docs, index, prompt = tmp_path / "docs.jsonl", tmp_path / "ix", tmp_path / "prompt.txt"
    _write(docs, {"a": "Alpha report", "b": "Beta memo"})
    prompt.write_text("Situate this chunk: {chunk_content}")
    assert main(["index", str(docs), "--out", str(index), "--contextualizer", "claude",
                 "--context-prompt", str(prompt), "--embedder", "none", "--chunk-size", "64",
                 "--overlap", "0"]) == 0
    before = (index / "index.json").read_bytes()
    capsys.readouterr()
    refused = {
        ("--chunk-size", "512"): "--chunk-size 512 differs from its 64",
        ("--overlap", "64"): "--overlap 64 differs from its 0",
        ("--contextualizer", "structural"): "--contextualizer structural differs from its claude",
        ("--embedder", "e5-small"): "--embedder e5-small differs from its none",
        ("--context-model", "claude-sonnet-4-5"):
            "--context-model claude-sonnet-4-5 differs from its claude-haiku-4-5",
        ("--parents",): "--parents differs from its False",
        ("--tokenizer", "words"): "--tokenizer words differs from its auto"}
    for option, message in refused.items():
        assert main(["index", str(docs), "--out", str(index), "--update", *option]) == 2
        assert capsys.readouterr().err == (
            f"ragkit: error: {index}: --update keeps the index's own options, and {message}; "
            f"rebuild the index to change it\n")
    prompt.write_text("Another instruction: {chunk_content}")
    assert main(["index", str(docs), "--out", str(index), "--update", "--context-prompt",
                 str(prompt)]) == 2
    assert f"--context-prompt {prompt} differs from the prompt it was built with" in \
        capsys.readouterr().err
    assert (index / "index.json").read_bytes() == before
    prompt.write_text("Situate this chunk: {chunk_content}")
    assert main(["index", str(docs), "--out", str(index), "--update", "--chunk-size", "64",
                 "--overlap", "0", "--contextualizer", "claude", "--embedder", "none",
                 "--context-model", "claude-haiku-4-5", "--context-prompt", str(prompt)]) == 0
    assert "0 documents added or changed, 0 removed, 2 unchanged" in capsys.readouterr().out


def test_update_refuses_to_remove_most_of_the_index_unless_allowed(tmp_path, monkeypatch,
                                                                   capsys):
    """`index docs/d1.md --out idx --update` (one file for the folder) removed 39 of 40
    documents without a word, contexts Claude wrote included."""
    from ragkit.cli import main
    monkeypatch.setenv("RAGKIT_HOME", str(tmp_path / "home"))
    docs, one, index = tmp_path / "docs.jsonl", tmp_path / "one.jsonl", tmp_path / "ix"
    _write(docs, {"a": "Alpha", "b": "Beta", "c": "Gamma"})
    one.write_text(docs.read_text().splitlines()[0] + "\n")
    assert main(["index", str(docs), "--out", str(index), "--embedder", "none"]) == 0
    before = (index / "index.json").read_bytes()
    capsys.readouterr()
    assert main(["index", str(one), "--out", str(index), "--update"]) == 2
    assert capsys.readouterr().err == (
        f"ragkit: error: {index}: --update would remove 2 of the index's 3 documents ({one} "
        f"holds 1); check the path, or add --allow-removals\n")
    assert (index / "index.json").read_bytes() == before
    assert main(["index", str(one), "--out", str(index), "--update", "--allow-removals"]) == 0
    assert "0 documents added or changed, 2 removed, 1 unchanged" in capsys.readouterr().out
    # without --update it did nothing, unsaid; now one line, and the index is untouched
    before = (index / "index.json").read_bytes()
    assert main(["index", str(docs), "--out", str(index), "--allow-removals"]) == 2
    assert capsys.readouterr().err == (
        "ragkit: error: --allow-removals applies to --update (a build without it indexes "
        "exactly DOCS); add --update, or leave it out\n")
    assert (index / "index.json").read_bytes() == before


def test_update_of_a_one_document_index_that_would_lose_it_asks_too(tmp_path, monkeypatch,
                                                                    capsys):
    from ragkit.cli import main
    monkeypatch.setenv("RAGKIT_HOME", str(tmp_path / "home"))
    docs, other, index = tmp_path / "docs.jsonl", tmp_path / "other.jsonl", tmp_path / "ix"
    _write(docs, {"a": "Alpha"})
    _write(other, {"b": "Beta"})
    assert main(["index", str(docs), "--out", str(index), "--embedder", "none"]) == 0
    capsys.readouterr()
    assert main(["index", str(other), "--out", str(index), "--update"]) == 2
    assert "--update would remove 1 of the index's 1 document (" in capsys.readouterr().err
    # a prompt given to an index built without Claude names its contextualizer
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("Situate: {chunk_content}")
    assert main(["index", str(docs), "--out", str(index), "--update", "--context-prompt",
                 str(prompt)]) == 2
    assert (f"--context-prompt {prompt} differs from its contextualizer structural's, which "
            f"takes no prompt") in capsys.readouterr().err


def test_update_of_a_parents_index_is_refused_naming_it_before_any_work(tmp_path):
    """It was refused after the folder was loaded and chunked, naming neither the index nor
    --parents."""
    docs, index, home = tmp_path / "docs.jsonl", tmp_path / "ix", tmp_path / "home"
    _write(docs, {"a": "Alpha report", "b": "Beta memo"})
    _ragkit(home, "index", str(docs), "--out", str(index), "--embedder", "none", "--parents")
    env = {**os.environ, "RAGKIT_HOME": str(home)}
    done = subprocess.run([str(RAGKIT), "index", str(tmp_path / "nothere.jsonl"), "--out",
                           str(index), "--update"], env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2 and done.stderr.strip().splitlines()[-1] == (
        f"ragkit: error: {index}: --update cannot change a --parents index; rebuild it")
