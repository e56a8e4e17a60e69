"""Running out of memory is one line: `ragkit: error: out of memory while STEP (WHY); nothing
was replaced`, exit status 2, the old output kept and no temporary file left — whether an
array allocation failed mid-search, an import failed for want of memory (numpy's libraries
could not be mapped, which read as a traceback), or Kiwi's model would not fit (it aborts
the process on std::bad_alloc, and an import failing for memory read as "pip install
kiwipiepy"). Under an address-space limit OpenBLAS starts with fewer threads: one it could
not start made it send SIGINT to its own process, read as Ctrl-C."""
from __future__ import annotations

import builtins
import json
import os
import re
import resource
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from cli_errors import one_error_line

from ragkit import memory
from ragkit.cli import main
from ragkit.lexical import kiwi
from ragkit.memory import OutOfMemory, out_of_memory

DOCS = [{"id": "refunds", "text": "A refund is possible within 14 days of the first payment."},
        {"id": "sync", "text": "Background sync runs every 15 minutes while the app is open."}]
KOREAN = [{"id": "환불", "text": "청약철회는 배송받은 날부터 칠일 이내에 메모리 시험으로 가능합니다."}]


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return path


@pytest.fixture
def no_limit(monkeypatch):
    """The line as it reads without `ulimit -v` (the test may run under one)."""
    monkeypatch.setattr(memory, "address_limit", lambda: None)


@pytest.fixture
def fresh_kiwi():
    kiwi.load.cache_clear()
    yield
    kiwi.load.cache_clear()


def test_an_allocation_failing_mid_search_is_one_line_and_keeps_the_old_run(
        tmp_path, monkeypatch, capsys, no_limit):
    from ragkit.lexical import bm25_batch
    assert main(["index", str(_write(tmp_path / "docs.jsonl", DOCS)), "--out",
                 str(tmp_path / "idx"), "--embedder", "none"]) == 0
    queries = _write(tmp_path / "q.jsonl", [{"id": "q1", "text": "refund days"}])
    run = tmp_path / "run.trec"
    assert main(["search", str(tmp_path / "idx"), "--queries", str(queries), "--out", str(run),
                 "--mode", "bm25", "--rerank", "none", "--k", "2"]) == 0
    before = run.read_bytes()
    capsys.readouterr()

    def allocate(*args, **kwargs):
        return np.empty(1 << 58, dtype=np.int64)  # numpy's own "Unable to allocate" error

    monkeypatch.setattr(bm25_batch, "_top_k", allocate)
    assert main(["search", str(tmp_path / "idx"), "--queries", str(queries), "--out", str(run),
                 "--mode", "bm25", "--rerank", "none", "--k", "2"]) == 2
    err = capsys.readouterr().err
    assert err.splitlines() == [
        "ragkit: error: out of memory while searching (Unable to allocate 2.00 EiB for an "
        "array with shape (288230376151711744,) and data type int64); nothing was replaced"]
    assert run.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs.jsonl", "idx", "q.jsonl",
                                                          "run.trec"]


LOADING = """
import resource, sys
from ragkit.cli import main
used = int(next(l for l in open("/proc/self/status") if l.startswith("VmSize:")).split()[1])
resource.setrlimit(resource.RLIMIT_AS, ((used + 6 * 1024) * 1024, resource.RLIM_INFINITY))
sys.exit(main(sys.argv[1:]))
"""


def test_an_import_failing_for_want_of_memory_is_one_line_naming_the_package(tmp_path):
    """A command loads numpy, scipy and the rest when it starts; under `prlimit --as` that
    failed with a MemoryError or ImportError traceback ("failed to map segment")."""
    docs = _write(tmp_path / "docs.jsonl", DOCS)
    done = subprocess.run([sys.executable, "-c", LOADING, "index", str(docs), "--out",
                           str(tmp_path / "idx"), "--embedder", "none"],
                          capture_output=True, text=True, timeout=120)
    line = one_error_line(done)
    assert re.fullmatch(r"ragkit: error: out of memory while loading [\w.]+ \(.+; the address "
                        r"space is limited to [\d,]+ MB by ulimit -v\); nothing was replaced",
                        line), line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs.jsonl"]


@pytest.mark.parametrize("how", ["mapping", "allocation"])
def test_kiwi_failing_to_import_for_want_of_memory_does_not_advise_pip(
        tmp_path, monkeypatch, capsys, no_limit, fresh_kiwi, how):
    """The package IS installed: its import failed for want of memory (its library could not
    be mapped, or the import it made raised MemoryError)."""
    if how == "mapping":
        failure = ImportError("/x/_kiwipiepy.abi3.so: failed to map segment from shared object")
    else:
        failure = ImportError("cannot import name 'Kiwi'")
        failure.__cause__ = MemoryError()
    real = builtins.__import__

    def importing(name, *args, **kwargs):
        if name == "kiwipiepy":
            raise failure
        return real(name, *args, **kwargs)

    monkeypatch.setattr(kiwi, "headroom", lambda: None)
    monkeypatch.setattr(builtins, "__import__", importing)
    with pytest.raises(ImportError) as raised:
        kiwi.load()
    assert out_of_memory(raised.value)
    code = main(["index", str(_write(tmp_path / "ko.jsonl", KOREAN)), "--out",
                 str(tmp_path / "idx"), "--embedder", "none"])
    reason = ("a shared library could not be mapped into memory" if how == "mapping"
              else "an allocation failed")
    assert (code, capsys.readouterr().err.splitlines()[-1:]) == (2, [
        f"ragkit: error: out of memory while building the index ({reason}); nothing was "
        f"replaced"])
    assert not (tmp_path / "idx").exists()


def test_kiwi_is_not_loaded_where_the_limit_leaves_too_little_for_its_model(
        tmp_path, monkeypatch, capsys, no_limit, fresh_kiwi):
    """Kiwi aborts the process on std::bad_alloc (from 300 MB to 1.5 GB): no Python handler
    runs. A limit leaving less than its model needs is refused before it loads, and its
    allocator does not reserve its 1 GiB arena up front (which made 1.4 GB fail too)."""
    monkeypatch.delenv("MIMALLOC_ARENA_RESERVE", raising=False)
    monkeypatch.setattr(kiwi, "headroom", lambda: 100 * 2 ** 20)
    with pytest.raises(OutOfMemory):
        kiwi.load()
    assert os.environ["MIMALLOC_ARENA_RESERVE"] == "0"
    assert main(["index", str(_write(tmp_path / "ko.jsonl", KOREAN)), "--out",
                 str(tmp_path / "idx"), "--embedder", "none"]) == 2
    assert capsys.readouterr().err.splitlines()[-1:] == [
        "ragkit: error: out of memory while building the index (the Korean tokenizer's model, "
        "kiwipiepy, needs about 650 MB of address space and the limit (ulimit -v) leaves "
        "100 MB); nothing was replaced"]
    assert not (tmp_path / "idx").exists()


BLAS = """
import argparse, os, sys
from ragkit import cli

def probe(args):
    print(os.environ.get("OPENBLAS_NUM_THREADS"))

parser = type("Parser", (), {"parse_args": lambda self, argv: argparse.Namespace(
    func=probe, command="search")})
cli.build_parser = parser
cli.main([])
print(os.environ.get("OPENBLAS_NUM_THREADS"))
"""


@pytest.mark.parametrize("limit, given, threads", [
    (1 << 30, {}, "1"),  # one per GiB of the limit
    (None, {}, "None"),  # no limit: OpenBLAS's own choice, a thread per core
    (1 << 30, {"OMP_NUM_THREADS": "3"}, "None"),  # a count the user set is kept
])
def test_under_an_address_space_limit_openblas_starts_one_thread_per_gib(limit, given, threads):
    """At `prlimit --as=150M` OpenBLAS could not start its second thread, sent its own process
    SIGINT, and `ragkit search` said "interrupted" as if the user had pressed Ctrl-C."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")}
    hard = resource.getrlimit(resource.RLIMIT_AS)[1]

    def limited() -> None:
        if limit is not None:
            resource.setrlimit(resource.RLIMIT_AS, (limit, hard))

    done = subprocess.run([sys.executable, "-c", BLAS], capture_output=True, text=True,
                          env={**env, **given}, preexec_fn=limited, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [threads, "None"]  # taken back when the command ends


@pytest.mark.parametrize("site", ["site-packages", "dist-packages"])
def test_the_package_an_import_ran_out_of_memory_in_is_named_under_either_site_folder(site):
    """Debian's and Ubuntu's system Python installs into dist-packages: the line read
    "out of memory while loading __init__" there, not "loading numpy"."""
    path = f"/usr/lib/python3/{site}/numpy/__init__.py"
    try:
        exec(compile("raise MemoryError()", path, "exec"), {})
    except MemoryError as exc:
        said = memory.describe(exc, "searching")
    assert said.startswith("out of memory while loading numpy (an allocation failed")
