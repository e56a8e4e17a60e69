"""ragkit.atomic: refuse what is not ours, replace what is crash-safely, follow the umask."""
from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from ragkit import atomic
from ragkit.atomic import check_target, replace_folder, write_text
from ragkit.documents import RagkitError


def is_ours(path) -> bool:
    """Test recogniser: a folder holding `OURS`, or a file starting with `ours`."""
    if path.is_dir():
        return (path / "OURS").is_file()
    return path.read_text().startswith("ours")


def make_ours(folder, content="old"):
    folder.mkdir()
    (folder / "OURS").write_text(content)
    return folder


def mode(path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def umask():
    """Set the process umask for one test, then put the old one back."""
    saved = os.umask(0o022)
    yield os.umask
    os.umask(saved)


def test_user_folder_is_refused_and_untouched(tmp_path):
    user = tmp_path / "photos"
    user.mkdir()
    (user / "cat.jpg").write_bytes(b"\xff\xd8")
    ran = []
    with pytest.raises(RagkitError, match=r"photos: exists and is not a test output; refusing"):
        with replace_folder(user, is_ours, "a test output"):
            ran.append(True)
    assert ran == []
    assert [p.name for p in user.iterdir()] == ["cat.jpg"]
    assert [p.name for p in tmp_path.iterdir()] == ["photos"]


def test_file_where_a_folder_is_expected_is_refused(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(RagkitError, match=r"notes.txt: exists and is a file, not a test output"):
        with replace_folder(tmp_path / "notes.txt", is_ours, "a test output"):
            pass
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_user_file_is_refused_and_unchanged(tmp_path):
    path = tmp_path / "run.txt"
    path.write_text("my thesis\n")
    with pytest.raises(RagkitError, match=r"run.txt: exists and is not a run; refusing"):
        write_text(path, "ours new", is_ours=is_ours, what="a run")
    assert path.read_text() == "my thesis\n"
    assert [p.name for p in tmp_path.iterdir()] == ["run.txt"]


def test_our_file_is_replaced(tmp_path):
    path = tmp_path / "run.txt"
    path.write_text("ours old")
    write_text(path, "ours new", is_ours=is_ours, what="a run")
    assert path.read_text() == "ours new"
    assert [p.name for p in tmp_path.iterdir()] == ["run.txt"]


def test_existing_output_is_replaced_with_nothing_left_beside_it(tmp_path):
    target = make_ours(tmp_path / "idx")
    (target / "stale.bin").write_bytes(b"x")
    with replace_folder(target, is_ours, "a test output") as tmp:
        assert tmp.parent == tmp_path and tmp != target
        (tmp / "OURS").write_text("new")
    assert sorted(p.name for p in target.iterdir()) == ["OURS"]
    assert (target / "OURS").read_text() == "new"
    assert [p.name for p in tmp_path.iterdir()] == ["idx"]  # no .idx.new-* / .idx.old-*


def test_absent_and_empty_targets_are_filled(tmp_path, monkeypatch):
    (tmp_path / "empty").mkdir()
    for name in ("empty", "absent"):
        with replace_folder(tmp_path / name, is_ours, "a test output") as tmp:
            (tmp / "OURS").write_text(name)
        assert (tmp_path / name / "OURS").read_text() == name
    monkeypatch.chdir(tmp_path)  # a relative target is renamed beside itself, in its parent
    with replace_folder("absent", is_ours, "a test output") as tmp:
        (tmp / "OURS").write_text("again")
    assert (tmp_path / "absent" / "OURS").read_text() == "again"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["absent", "empty"]


def test_failure_inside_the_block_leaves_the_old_target_intact(tmp_path):
    target = make_ours(tmp_path / "idx")
    with pytest.raises(KeyError):
        with replace_folder(target, is_ours, "a test output") as tmp:
            (tmp / "OURS").write_text("half")
            raise KeyError("interrupted")
    with pytest.raises(RagkitError, match=r"idx: cannot write a test output \(disk full\); "
                                          r"nothing was replaced"):
        with replace_folder(target, is_ours, "a test output") as tmp:
            raise OSError(28, "disk full")
    assert (target / "OURS").read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["idx"]


def test_failed_rename_puts_the_old_target_back(tmp_path, monkeypatch):
    target = make_ours(tmp_path / "idx")
    real_rename = os.rename

    def rename(src, dst):
        if os.path.basename(src).startswith(".idx.new-"):
            raise OSError(18, "cross-device link")
        real_rename(src, dst)

    monkeypatch.setattr(atomic.os, "rename", rename)
    monkeypatch.setattr(atomic, "_exchange", lambda a, b: False)  # a system without renameat2
    with pytest.raises(RagkitError, match="cross-device link"):
        with replace_folder(target, is_ours, "a test output") as tmp:
            (tmp / "OURS").write_text("new")
    assert (target / "OURS").read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["idx"]  # the emptied aside folder too


def land_during_the_rename(monkeypatch, target, put) -> list[Path]:
    """Make `put(target)` happen once, when the first `.NAME.new-*` folder is about to be
    renamed in: another writer's folder lands between the look at `target` and the rename."""
    real_rename, landed = os.rename, []

    def rename(src, dst):
        if not landed and os.path.basename(src).startswith(f".{target.name}.new-"):
            landed.append(Path(src))
            put(target)
        real_rename(src, dst)

    monkeypatch.setattr(atomic.os, "rename", rename)
    return landed


@pytest.mark.parametrize("exchange", [True, False], ids=["renameat2", "two renames"])
def test_two_writers_of_an_absent_folder_both_succeed_and_the_last_one_in_stays(
        tmp_path, monkeypatch, exchange):
    """Two sweeps keeping one point: the other's folder landed after this writer looked for
    the target and before its rename, which then failed "Directory not empty"."""
    def other_writer(target):
        with replace_folder(target, is_ours, "a test output") as other:
            (other / "OURS").write_text("other")

    target = tmp_path / "idx"
    landed = land_during_the_rename(monkeypatch, target, other_writer)
    if not exchange:
        monkeypatch.setattr(atomic, "_exchange", lambda a, b: False)
    with replace_folder(target, is_ours, "a test output") as tmp:
        (tmp / "OURS").write_text("new")
    assert landed == [tmp]
    assert (target / "OURS").read_text() == "new"
    assert [p.name for p in tmp_path.iterdir()] == ["idx"]


def test_a_user_folder_landing_during_the_rename_is_refused_and_kept(tmp_path, monkeypatch):
    """Only ragkit's own output is ever swapped out, also when it appears at the last moment."""
    def user_folder(target):
        target.mkdir()
        (target / "cat.jpg").write_bytes(b"\xff\xd8")

    target = tmp_path / "photos"
    land_during_the_rename(monkeypatch, target, user_folder)
    with pytest.raises(RagkitError, match=r"photos: exists and is not a test output; refusing"):
        with replace_folder(target, is_ours, "a test output") as tmp:
            (tmp / "OURS").write_text("new")
    assert [p.name for p in target.iterdir()] == ["cat.jpg"]
    assert [p.name for p in tmp_path.iterdir()] == ["photos"]


@pytest.mark.parametrize("mask, folder_mode, file_mode", [(0o022, 0o755, 0o644),
                                                          (0o077, 0o700, 0o600)])
def test_written_files_and_folders_follow_the_umask(tmp_path, umask, mask, folder_mode,
                                                    file_mode):
    umask(mask)
    with replace_folder(tmp_path / "idx", is_ours, "a test output") as tmp:
        (tmp / "OURS").write_text("x")
        (tmp / "sub").mkdir()
    write_text(tmp_path / "run.txt", "ours")
    assert mode(tmp_path / "idx") == folder_mode
    assert mode(tmp_path / "idx" / "sub") == folder_mode
    assert mode(tmp_path / "idx" / "OURS") == file_mode
    assert mode(tmp_path / "run.txt") == file_mode


def test_parent_that_is_a_file_is_a_clear_error(tmp_path):
    (tmp_path / "docs.jsonl").write_text("{}\n")
    for path in (tmp_path / "docs.jsonl" / "idx", tmp_path / "docs.jsonl" / "a" / "idx"):
        with pytest.raises(RagkitError, match=r"cannot write here, .*docs.jsonl is a file"):
            check_target(path, is_ours, "a test output", folder=True)
        with pytest.raises(RagkitError, match=r"cannot write here, .*docs.jsonl is a file"):
            with replace_folder(path, is_ours, "a test output"):
                pass
        with pytest.raises(RagkitError, match=r"cannot write here, .*docs.jsonl is a file"):
            write_text(path, "ours")
    assert (tmp_path / "docs.jsonl").read_text() == "{}\n"


def test_check_target_creates_nothing_and_write_creates_parents(tmp_path):
    deep = tmp_path / "a" / "b" / "run.txt"
    assert check_target(deep, is_ours, "a run", folder=False) == deep
    assert list(tmp_path.iterdir()) == []
    write_text(deep, "ours")
    assert deep.read_text() == "ours"


def test_a_folder_where_a_file_is_expected(tmp_path):
    (tmp_path / "run").mkdir()
    with pytest.raises(RagkitError, match=r"run: is a folder; expected a file path for a run"):
        write_text(tmp_path / "run", "ours", is_ours=is_ours, what="a run")
    with pytest.raises(RagkitError, match=r"run: cannot write \(Is a directory\)"):
        write_text(tmp_path / "run", "ours")  # no recogniser: the OS refuses, not a traceback
    assert [p.name for p in tmp_path.iterdir()] == ["run"]  # no temporary file left


def test_a_file_output_given_as_a_link_is_refused_and_the_linked_file_kept(tmp_path):
    """The rename that writes a file replaced the link with a new file, leaving the file it
    named as it was (an agent trace through a link did so silently); a dangling link read as
    "exists and is not ..."."""
    target = tmp_path / "kept.txt"
    target.write_text("ours, old")
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    with pytest.raises(RagkitError) as err:
        write_text(link, "ours, new", is_ours=is_ours, what="a test output")
    assert str(err.value) == (f"{link}: is a symbolic link (to {target}); writing a test output "
                              f"replaces the link, not the file it names: give that file itself")
    assert link.is_symlink() and target.read_text() == "ours, old"
    dangling = tmp_path / "dangling.txt"
    dangling.symlink_to(tmp_path / "nowhere.txt")
    with pytest.raises(RagkitError, match="dangling.txt: is a symbolic link"):
        check_target(dangling, is_ours, "a test output", folder=False)
    assert write_text(target, "ours, new", is_ours=is_ours).read_text() == "ours, new"


def test_a_failure_producing_lazy_content_is_told_apart_from_a_failure_to_write(tmp_path,
                                                                               monkeypatch):
    """An OSError raised while lazy content was produced (a cache read for it) was reported as
    "PATH: cannot write (...)", blaming the output file; it is the producer's own line, and
    only the write's own failure says "cannot write". The old file is kept either way."""
    path = tmp_path / "run.txt"
    path.write_text("ours old")

    def lines(error: OSError):
        yield "ours new\n"
        raise error

    for error, said in (
            (OSError(5, "Input/output error", "/data/cache/embeddings.sqlite"),
             f"/data/cache/embeddings.sqlite: Input/output error; {path} is left as it was"),
            (OSError(5, "Input/output error"),
             f"{path}: its content could not be made (Input/output error); the file is left "
             f"as it was")):
        with pytest.raises(RagkitError) as failed:
            write_text(path, lines(error), is_ours=is_ours, what="a run")
        assert str(failed.value) == said and failed.value.__cause__ is error
    assert path.read_text() == "ours old"
    assert [p.name for p in tmp_path.iterdir()] == ["run.txt"]

    def full(fd):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(atomic.os, "fsync", full)
    with pytest.raises(RagkitError, match=r"^.*run\.txt: cannot write \(No space left on "
                                          r"device\)$"):
        write_text(path, iter(["ours new\n"]), is_ours=is_ours, what="a run")
    assert path.read_text() == "ours old"
    assert [p.name for p in tmp_path.iterdir()] == ["run.txt"]


def test_a_short_write_without_an_errno_is_said_to_be_a_full_disk_maybe(tmp_path):
    """numpy's short write on a full disk is an OSError with no errno: the line read
    "cannot write a ragkit index (6320 requested and 2016 written)", and did not say why."""
    target = tmp_path / "out"
    with pytest.raises(RagkitError) as caught:
        with replace_folder(target, is_ours, "a ragkit index"):
            raise OSError("6320 requested and 2016 written")
    assert str(caught.value) == (f"{target}: cannot write a ragkit index (6320 requested and "
                                 f"2016 written: a full disk?); nothing was replaced")
    assert not target.exists()
