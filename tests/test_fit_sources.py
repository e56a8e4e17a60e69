"""`ragkit.fit_sources`: which code a fitted model was last refitted or checked against, read
as code — a docstring, a comment or a pinned hash changes nothing, a changed line of code is
named."""
from __future__ import annotations

import json

import pytest

from ragkit import fit_sources
from ragkit.errors import RagkitError

UNITS = '''"""Answer units."""
MODEL_SHA256 = "aaaa"
SEP = f"{'.'} "  # « a sentence's end »


def units(text: str) -> list[str]:
    """Split `text`
    into sentences."""
    return text.split(SEP)  # one per sentence
'''


def _tree(tmp_path):
    (tmp_path / "ragkit").mkdir()
    units = tmp_path / "ragkit" / "units.py"
    units.write_text(UNITS)
    (tmp_path / "ragkit" / "other.py").write_text("X = 1\n")
    model = tmp_path / "ragkit" / "model.json"
    model.write_text("{}\n")
    sources = {f"ragkit/{p.name}": fit_sources.source_digest(p)
               for p in (units, tmp_path / "ragkit" / "other.py")}
    return units, model, sources


def test_a_change_to_the_code_is_named_and_nothing_else_counts(tmp_path):
    units, model, sources = _tree(tmp_path)
    assert fit_sources.write_record(model, sources) == tmp_path / "ragkit" / "model.sources.json"
    assert fit_sources.changed(model, tmp_path) == []
    units.write_text(UNITS.replace('"""Split `text`\n    into sentences."""', '"""Sentences."""')
                     .replace("# one per sentence", "# each").replace('"aaaa"', '"bbbbbb"')
                     .replace("# « a sentence's end »", "")
                     .replace("def units", "\n\ndef units").replace("str]:", "str]:   "))
    assert fit_sources.changed(model, tmp_path) == []
    for edit in ('split(SEP, 9)', 'split(SEP)  # one per sentence\n    return []'):
        units.write_text(UNITS.replace('split(SEP)  # one per sentence', edit))
        assert fit_sources.changed(model, tmp_path) == ["ragkit/units.py"]
    units.write_text(UNITS)
    (tmp_path / "ragkit" / "other.py").unlink()
    assert fit_sources.changed(model, tmp_path) == ["ragkit/other.py"]


def test_a_model_never_checked_is_named_by_its_missing_record(tmp_path):
    _, model, _ = _tree(tmp_path)
    assert fit_sources.changed(model, tmp_path) == [
        "model.sources.json (no record: the model was never checked)"]


def test_the_record_lists_the_ragkit_modules_imported_and_only_those():
    found = fit_sources.imported_sources()
    assert "ragkit/fit_sources.py" in found and "ragkit/atomic.py" in found
    assert all(name.startswith("ragkit/") and name.endswith(".py") for name in found)
    assert found["ragkit/fit_sources.py"] == fit_sources.source_digest(fit_sources.ROOT /
                                                                     "ragkit/fit_sources.py")


def test_a_strangers_file_in_the_records_place_is_kept(tmp_path):
    _, model, sources = _tree(tmp_path)
    record = fit_sources.record_path(model)
    record.write_text('{"mine": 1}\n')
    with pytest.raises(RagkitError, match="model.sources.json"):
        fit_sources.write_record(model, sources)
    assert json.loads(record.read_text()) == {"mine": 1}


def test_a_line_break_python_does_not_count_leaves_the_cuts_in_place(tmp_path):
    """str.splitlines also breaks at a form feed or U+2028 inside a string, which Python's
    parser does not: the comment after it was cut from the wrong line."""
    path = tmp_path / "m.py"
    path.write_text('X = "a\x0cb\u2028c"\nY = 1  # a comment\n')
    bare = fit_sources.source_digest(path)
    path.write_text('X = "a\x0cb\u2028c"\nY = 1\n')
    assert fit_sources.source_digest(path) == bare
    path.write_text('X = "a\x0cb\u2028c"\nY = 2\n')
    assert fit_sources.source_digest(path) != bare
