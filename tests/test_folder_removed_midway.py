"""A file deleted after the folder was listed and before it was read is said to have been
removed while the folder was read — not "cannot read (No such file or directory)", which
reads as a fault of the file. The deletion is made to fall between the two: right after
the folder's listing."""
from __future__ import annotations

from pathlib import Path

import pytest

import ragkit.document_folder
from ragkit.document_folder import Skipped, load_folder
from ragkit.documents import RagkitError


@pytest.fixture
def docs(tmp_path: Path, monkeypatch) -> Path:
    for name in ("a.md", "b.md", "c.md"):
        (tmp_path / name).write_text(f"# {name}\n\nThe note {name} is about pumps.\n")
    listed = ragkit.document_folder.scan

    def listed_then_removed(*args, **kwargs):
        found = listed(*args, **kwargs)
        (tmp_path / "b.md").unlink()
        return found
    monkeypatch.setattr(ragkit.document_folder, "scan", listed_then_removed)
    return tmp_path


def test_a_file_removed_after_the_listing_stops_the_load_saying_so(docs):
    with pytest.raises(RagkitError) as caught:
        load_folder(docs, progress=False)
    assert str(caught.value) == f"{docs / 'b.md'}: removed while the folder was read"


def test_with_skip_bad_it_is_left_out_saying_so(docs):
    with pytest.warns(UserWarning):
        loaded = load_folder(docs, skip_bad=True, progress=False)
    assert [doc.id for doc in loaded] == ["a.md", "c.md"]
    assert loaded.skipped == [Skipped("b.md", f"{docs / 'b.md'}: removed while the folder "
                                              f"was read")]
