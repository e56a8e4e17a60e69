"""A cache path that is a symbolic link (the user keeps the cache elsewhere, on a larger disk):
`ragkit cache clear` keeps the link and clears the file it names — a damaged call cache, a
sound one, the embedding cache alike — and the next use starts again through the link."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ragkit.cache import CallCache
from ragkit.embed.cache import CachedEmbedder
from ragkit.errors import RagkitError
from ragkit.pricing import Usage
from word_embedder import WordEmbedder

RAGKIT = str(Path(sys.executable).parent / "ragkit")


@pytest.fixture
def linked(tmp_path: Path) -> tuple[Path, Path]:
    """(RAGKIT_HOME/cache, the folder elsewhere its cache files are linked into)."""
    (tmp_path / "home" / "cache").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    for name in ("calls.sqlite", "embeddings.sqlite"):
        (tmp_path / "home" / "cache" / name).symlink_to(tmp_path / "elsewhere" / name)
    return tmp_path / "home" / "cache", tmp_path / "elsewhere"


def ragkit(home: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "VOYAGE_"))}
    env["RAGKIT_HOME"] = str(home)
    return subprocess.run([RAGKIT, *args], capture_output=True, text=True, env=env, timeout=120)


def fill_calls(path: Path) -> None:
    cache = CallCache(path)  # replies filling several pages
    for i in range(40):
        cache.put(f"key{i}", "/v1/messages", "claude-haiku-4-5", {"text": "x" * 300 + str(i)},
                  Usage(100, 10, 0, 0), priced=False)
    cache.close()


def test_clearing_a_damaged_linked_call_cache_keeps_the_link_and_deletes_its_file(linked):
    cache, elsewhere = linked
    link, target = cache / "calls.sqlite", elsewhere / "calls.sqlite"
    fill_calls(link)
    with open(target, "r+b") as handle:  # what a failing disk leaves
        handle.seek(4096)
        handle.write(b"\xff" * 8192)
    cleared = ragkit(cache.parent, "cache", "clear")
    assert cleared.returncode == 0, cleared.stderr
    assert cleared.stdout == (f"removed the damaged call cache {link} (database disk image is "
                              f"malformed); it starts again empty\n")
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert sorted(os.listdir(elsewhere)) == []  # the damaged file, its -wal and -shm
    stats = ragkit(cache.parent, "cache", "stats")
    assert (stats.returncode, stats.stdout) == (
        0, f"no call cache at {link} (a link to {target}, which names no file)\n"), stats.stderr
    assert link.is_symlink() and not target.exists()  # stats reads: it makes none
    CallCache(link).close()
    assert link.is_symlink() and target.is_file()  # the next use starts again where it points


def test_cache_stats_and_clear_through_a_link_to_no_file_make_no_cache(linked):
    """`ragkit cache stats` and `clear` through a link naming no file (the link a cleared
    damaged cache leaves, a disk not mounted) made an empty cache where the link points, its
    folder too; they make none and say so in one line, the same line (stats said "the call
    cache is empty", hiding that the link leads nowhere). So with no link and no file."""
    cache, elsewhere = linked
    link, target = cache / "calls.sqlite", elsewhere / "calls.sqlite"

    def stats_and_clear(listed: str, said: str) -> None:
        stats = ragkit(cache.parent, "cache", "stats")
        assert (stats.returncode, stats.stdout, stats.stderr) == (0, listed, "")
        for model in ([], ["--model", "claude-haiku-4-5"]):
            cleared = ragkit(cache.parent, "cache", "clear", *model)
            assert (cleared.returncode, cleared.stdout, cleared.stderr) == (0, said, "")

    none = f"no call cache at {link} (a link to {target}, which names no file)"
    elsewhere.rmdir()  # the disk is not mounted
    stats_and_clear(f"{none}\n", f"{none}; nothing to clear\n")
    assert not elsewhere.exists() and os.readlink(link) == str(target)
    elsewhere.mkdir()  # mounted, the cache not made yet
    stats_and_clear(f"{none}\n", f"{none}; nothing to clear\n")
    assert os.listdir(elsewhere) == [] and os.readlink(link) == str(target)
    link.unlink()
    stats_and_clear("the call cache is empty\n", f"no call cache at {link}; nothing to clear\n")
    assert sorted(os.listdir(cache)) == ["embeddings.sqlite"]


def test_clearing_a_sound_linked_call_cache_empties_its_file_and_keeps_the_link(linked):
    cache, elsewhere = linked
    link = cache / "calls.sqlite"
    fill_calls(link)
    cleared = ragkit(cache.parent, "cache", "clear")
    assert cleared.stdout == f"removed 40 cached calls from {link}\n", cleared.stderr
    assert link.is_symlink() and (elsewhere / "calls.sqlite").is_file()
    assert ragkit(cache.parent, "cache", "stats").stdout == "the call cache is empty\n"


def test_clearing_a_linked_embedding_cache_keeps_the_link_and_deletes_its_file(linked):
    cache, elsewhere = linked
    link, target = cache / "embeddings.sqlite", elsewhere / "embeddings.sqlite"
    CachedEmbedder(WordEmbedder(["kettle"]), link).embed(["the kettle boils"])
    size = sum(p.stat().st_size for p in elsewhere.iterdir())  # with its -wal and -shm
    cleared = ragkit(cache.parent, "cache", "clear", "--embeddings")
    assert cleared.returncode == 0, cleared.stderr
    assert cleared.stdout == (f"removed the embedding cache {link} ({size / 1e6:.1f} MB); "
                              f"vectors are embedded again when next needed\n")
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert sorted(os.listdir(elsewhere)) == []
    again = ragkit(cache.parent, "cache", "clear", "--embeddings")
    assert again.stdout == (f"no embedding cache at {link} (a link to {target}, which names no "
                            f"file)\n")  # as the call cache's line says where it points
    CachedEmbedder(WordEmbedder(["kettle"]), link).embed(["the kettle boils"])
    assert link.is_symlink() and target.is_file()


def test_clearing_a_cache_path_naming_a_file_that_is_not_a_cache_deletes_nothing(linked):
    """`ragkit cache clear --embeddings` deleted the file the cache path names, whatever it
    was: a link made to the wrong file (here the user's notes) took the notes with it, and
    a plain file at the path went too, where the README promises such a file is refused."""
    cache, elsewhere = linked
    notes, link = elsewhere / "notes.txt", cache / "embeddings.sqlite"
    notes.write_text("my notes\n")
    link.unlink()
    link.symlink_to(notes)
    cleared = ragkit(cache.parent, "cache", "clear", "--embeddings")
    assert (cleared.returncode, cleared.stdout, cleared.stderr) == (2, "", (
        f"ragkit: error: {link}: is not a ragkit cache (sqlite) (a link to {notes}), so it is "
        f"not deleted; move or delete it yourself\n"))
    assert notes.read_text() == "my notes\n" and os.readlink(link) == str(notes)
    link.unlink()
    link.write_text("my notes\n")
    cleared = ragkit(cache.parent, "cache", "clear", "--embeddings")
    assert (cleared.returncode, cleared.stdout, cleared.stderr) == (2, "", (
        f"ragkit: error: {link}: is not a ragkit cache (sqlite), so it is not deleted; move "
        f"or delete it yourself\n"))
    assert link.read_text() == "my notes\n"


def test_a_call_cache_link_that_leads_back_to_itself_is_one_line(tmp_path, monkeypatch):
    """A calls.sqlite that is a link to itself (or a loop of links) was a RuntimeError
    traceback ("Symlink loop from ...") in `ragkit ask` and the claude contextualizer; it is
    one line naming the link. `ragkit cache stats` said the cache was empty and `clear` that
    the link named no file, exit 0: they say the same loop line, exit 2, changing nothing."""
    monkeypatch.chdir(tmp_path)
    home = tmp_path / "home"
    (home / "cache").mkdir(parents=True)
    Path("docs.jsonl").write_text('{"id": "a", "text": "the kettle boils water"}\n')
    built = ragkit(home, "index", "docs.jsonl", "--out", "ix", "--embedder", "none")
    assert built.returncode == 0, built.stderr
    link, other = home / "cache" / "calls.sqlite", home / "cache" / "other.sqlite"
    for points_to in ("calls.sqlite", "other.sqlite"):  # itself; through another link
        link.symlink_to(points_to)
        if points_to == "other.sqlite":
            other.symlink_to("calls.sqlite")
        said = (f"ragkit: error: {link}: is a symbolic link that leads back to itself (a loop), "
                f"so no call cache can be opened there; remove the link or point it at a file\n")
        for args in (["ask", "--index", "ix", "--k", "1", "kettle"],
                     ["index", "docs.jsonl", "--out", "cx", "--embedder", "none",
                      "--contextualizer", "claude"]):
            done = ragkit(home, *args)
            assert (done.returncode, done.stdout) == (2, ""), done.stderr
            assert done.stderr.splitlines(keepends=True)[-1] == said, done.stderr
            assert "Traceback" not in done.stderr
        for args in (["stats"], ["clear"], ["clear", "--model", "claude-haiku-4-5"]):
            done = ragkit(home, "cache", *args)
            assert (done.returncode, done.stdout, done.stderr) == (2, "", said)
        assert os.readlink(link) == points_to
        link.unlink()
    assert not Path("cx").exists() and os.readlink(other) == "calls.sqlite"


def test_an_embedding_cache_link_that_leads_back_to_itself_is_one_line(tmp_path):
    """An embeddings.sqlite linked to itself stopped `ragkit index` and `search` with a
    RuntimeError traceback ("Symlink loop from ..."); it is one line naming the link.
    `ragkit cache clear --embeddings` said "no embedding cache" (exit 0): the same line."""
    (tmp_path / "cache").mkdir()
    link = tmp_path / "cache" / "embeddings.sqlite"
    link.symlink_to("embeddings.sqlite")
    said = (f"{link}: is a symbolic link that leads back to itself (a loop), so no embedding "
            f"cache can be opened there; remove the link or point it at a file")
    with pytest.raises(RagkitError) as refused:
        CachedEmbedder(WordEmbedder(["kettle"]), link)
    assert str(refused.value) == said
    cleared = ragkit(tmp_path, "cache", "clear", "--embeddings")
    assert (cleared.returncode, cleared.stdout, cleared.stderr) == (2, "", f"ragkit: error: "
                                                                           f"{said}\n")
    assert os.readlink(link) == "embeddings.sqlite"


def test_a_file_where_the_cache_folder_goes_is_one_line_for_every_cache_command(tmp_path):
    """RAGKIT_HOME/cache a file (a download saved under that name): `cache stats` said "the
    call cache is empty" and `clear` "no call cache …; nothing to clear", exit 0, where `ask`
    says it cannot write there."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "cache").write_text("not a folder\n")
    for args, what, name in ((("stats",), "call cache", "calls.sqlite"),
                             (("clear",), "call cache", "calls.sqlite"),
                             (("clear", "--embeddings"), "embedding cache", "embeddings.sqlite")):
        done = ragkit(home, "cache", *args)
        assert (done.returncode, done.stdout, done.stderr) == (
            2, "", f"ragkit: error: {home / 'cache' / name}: no {what} can be there, "
                   f"{home / 'cache'} is a file, not a folder (move it, or set RAGKIT_HOME "
                   f"elsewhere)\n")
    assert (home / "cache").read_text() == "not a folder\n"

