"""The offline extractive answerer's learned sentence scorer: its nine columns by hand, the
committed model file (pinned, refit from dev by its script), and that the
answerer ranks units by it unless told to use the hand rule."""
from __future__ import annotations

import hashlib
import json
import math

import numpy as np
import pytest

from ragkit import extractive_scorer as scorer
from ragkit import fit_sources
from ragkit.documents import RagkitError
from ragkit.extractive import Block, Features, Params
from ragkit.rerank import offline
from ragkit.rerank.offline import LinearModel
from ragkit.train_reranker import dev_sets, dev_sha256


def _features() -> Features:
    """Three units of two passages (4 and 2 blocks); the question asks when."""
    units = (Block(0, 3, "Express delivery takes 5 days", 0.80, 0.5, 2, True, doc_cosine=0.90),
             Block(1, 0, "Shipping policy", 0.85, 1.0, 1, False, doc_cosine=0.70, titled=True),
             Block(1, 1, "We ship parcels", 0.60, 0.0, 1, False, doc_cosine=0.80))
    return Features("When does express delivery arrive?", True, units, 1.0, (), (4, 2))


def test_the_nine_columns_by_hand():
    x = scorer.columns(_features())
    assert x.shape == (3, len(scorer.COLUMNS)) == (3, 9)
    expected = [
        # closeness rank, gap to the best titled cosine, coverage, 1/rank, number,
        # ln(1 + chars), block / passage blocks, question pairs held, heading pair
        [1.0, 0.0, 0.5, 0.5, 1.0, math.log1p(29), 3 / 4, 1 / 2, 0.0],
        [0.0, -0.2, 1.0, 1.0, 0.0, math.log1p(15), 0.0, 0.0, 1.0],
        [0.5, -0.1, 0.0, 1.0, 0.0, math.log1p(15), 1 / 2, 0.0, 0.0]]
    assert x == pytest.approx(np.array(expected), abs=1e-6)
    # the question's `auto` tokens are express, delivery, arrive (stopwords dropped): of its
    # two pairs the first unit holds express–delivery


def test_no_units_no_rows():
    empty = Features("q?", False, (), 0.0)
    assert scorer.columns(empty).shape == (0, 9) and scorer.score(empty).shape == (0,)


def test_committed_model_loads_matches_its_pinned_hash_and_says_what_it_was_fitted_on():
    assert hashlib.sha256(scorer.MODEL_PATH.read_bytes()).hexdigest() == scorer.MODEL_SHA256
    model = scorer.model()
    assert model.features == scorer.COLUMNS and model.fmt == scorer.MODEL_FORMAT
    assert model.trained_on["questions"] == 147  # 104 shipped + 43 scikit-learn, dev only
    assert "split dev" in model.trained_on["data"]
    assert model.trained_on["index"]["embedder"] == "e5-small"


def test_score_is_the_standardised_columns_times_the_weights():
    found = _features()
    model = scorer.model()
    by_hand = ((scorer.columns(found) - model.mean) / model.scale) @ model.weights
    assert scorer.score(found) == pytest.approx(by_hand)
    # the answerer ranks by it (ties: the more relevant passage), the hand rule on request
    ranked = [b for b, _ in found.scored()]
    assert ranked == [found.blocks[i] for i in np.argsort(-by_hand, kind="stable")]
    hand = found.scored(Params(learned=False))
    assert [round(s, 6) for _, s in hand] == sorted((round(s, 6) for _, s in hand),
                                                     reverse=True)


def test_a_changed_model_file_is_one_clear_error(tmp_path):
    edited = tmp_path / "extractive_model.json"
    edited.write_text(scorer.MODEL_PATH.read_text().replace('"weights": [', '"weights": [ ', 1))
    with pytest.raises(RagkitError, match=r"extractive_model.json: sha256 .* does not match the "
                                          r"pinned .* refit it with `python -m "
                                          r"ragkit.train_extractive`"):
        LinearModel.load(edited, scorer.MODEL_SHA256, scorer.COLUMNS, scorer.MODEL_FORMAT,
                         scorer.TRAINER, "sentence scorer")
    record = json.loads(scorer.MODEL_PATH.read_text())
    edited.write_text(json.dumps({**record, "features": ["closeness"]}))
    with pytest.raises(RagkitError, match="field 'features'"):
        LinearModel.load(edited, None, scorer.COLUMNS, scorer.MODEL_FORMAT)
    edited.write_text(json.dumps({**record, "format": "ragkit.rerank.linear"}))
    with pytest.raises(RagkitError, match="not a ragkit.extractive.linear model"):
        LinearModel.load(edited, None, scorer.COLUMNS, scorer.MODEL_FORMAT)
    with pytest.raises(RagkitError, match="cannot read the sentence scorer model"):
        LinearModel.load(tmp_path / "absent.json", None, scorer.COLUMNS, scorer.MODEL_FORMAT,
                         scorer.TRAINER, "sentence scorer")


def _sklearn() -> str | None:
    try:
        import sklearn
    except ImportError:
        return None
    return sklearn.__version__


@pytest.mark.parametrize("model, trainer, own", [
    (scorer.MODEL_PATH, "ragkit.train_extractive", "ragkit/extractive_units.py"),
    (offline.MODEL_PATH, "ragkit.train_reranker", "ragkit/rerank/features.py")])
def test_each_fitted_model_was_checked_against_the_code_it_runs_on(model, trainer, own):
    """A change to the code a model was fitted through (answer units, reranker features,
    chunking, windows) must be followed by its training script's `--check`, which records
    the code it reproduced the file on: a file left stale by such a change (weights .47 where
    a refit gives .56) fails here, without the ~11 minutes a cold refit costs."""
    stale = fit_sources.changed(model)
    assert not stale, (f"{', '.join(stale)}: changed since {model.name} was last refitted or "
                       f"checked; run `python -m {trainer} --check` (and refit if it differs)")
    recorded = json.loads(fit_sources.record_path(model).read_text())["sources"]
    assert {own, "ragkit/chunking.py", "ragkit/embed/e5.py", "ragkit/windows.py",
            "ragkit/pipeline.py"} <= recorded.keys()


@pytest.mark.skipif(_sklearn() != "1.9.1", reason="the held-out questions need scikit-learn "
                                                  "1.9.1")
def test_both_models_were_fitted_on_the_dev_data_as_it_is_now(tmp_path):
    """The shipped dev split and the scikit-learn dev half (extracted into a temporary folder
    by its script) hash to what both model files record they were fitted on."""
    now = dev_sha256(dev_sets(heldout=tmp_path))
    for model in (scorer.MODEL_PATH, offline.MODEL_PATH):
        assert json.loads(model.read_text())["trained_on"]["data_sha256"] == now, model.name


def test_the_training_command_writes_checks_and_never_overwrites_a_strangers_file(tmp_path,
                                                                                   capsys):
    from ragkit.train_reranker import command
    model = LinearModel(scorer.COLUMNS, [0.0] * 9, [1.0] * 9, [0.5] * 9, {"questions": 1},
                        scorer.MODEL_FORMAT)

    def run(*argv: str) -> int:
        return command(list(argv), scorer.TRAINER, "Fit it.", scorer.MODEL_PATH,
                       lambda data, heldout: model, "sentence scorer", "PIN")
    foreign = tmp_path / "notes.json"
    foreign.write_text('{"mine": 1}\n')
    assert run("--out", str(foreign)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "notes.json: exists and is not a sentence scorer model" in err
    assert foreign.read_text() == '{"mine": 1}\n'
    fresh = tmp_path / "model.json"
    assert run("--out", str(fresh)) == 0 and fresh.read_text() == model.to_json()
    assert run("--out", str(fresh)) == 0  # its own file: rewritten
    assert run("--out", str(fresh), "--check") == 0
    assert "reproduced exactly" in capsys.readouterr().out
    text = fresh.read_text()
    fresh.write_text(text.replace('"scale": [\n  1.0', '"scale": [\n  1.00004', 1))
    assert run("--out", str(fresh), "--check") == 0
    assert "reproduced to 0.0001 (largest relative difference 4.0e-05" in capsys.readouterr().out
    record = fit_sources.record_path(fresh)
    assert record.name == "model.sources.json"
    assert "ragkit/train_reranker.py" in json.loads(record.read_text())["sources"]
    record.unlink()
    fresh.write_text(text.replace('"scale": [\n  1.0', '"scale": [\n  1.0002', 1))
    assert run("--out", str(fresh), "--check") == 1
    assert "DIFFERS from the refit" in capsys.readouterr().out
    assert not record.exists()  # a check that fails records nothing
    fresh.write_text(text.replace('"questions": 1', '"questions": 2', 1))  # fitted on other data
    assert run("--out", str(fresh), "--check") == 1
