"""The folders of documents written as files for grep, and how to empty them.

What it is: `corpora_folder()`, where `ragkit.notebook_data.raw_corpus` writes a data set's
documents as files (`$RAGKIT_HOME/cache/corpora/<hash of the documents>/`) for notebooks 06
and 07 to grep; `clear_corpora()`, which deletes them all (`ragkit cache clear --corpora`).
Why a module of its own: the command line empties the folder without loading the notebooks'
helpers.

What it is not: the call cache or the embedding cache (`ragkit.cache`, `ragkit.embed.cache`).
"""
from __future__ import annotations

import shutil
from pathlib import Path

from ragkit.models import ragkit_home


def corpora_folder() -> Path:
    """Where documents are written as files for grep: `$RAGKIT_HOME/cache/corpora/`."""
    return ragkit_home() / "cache" / "corpora"


def clear_corpora() -> tuple[int, int, int]:
    """Delete every folder of `corpora_folder()`: (folders removed, bytes freed, folders left
    because a notebook holds their lock, writing them now). A notebook re-run writes its
    folder again."""
    from filelock import FileLock  # deferred: the command line starts without it
    removed = freed = busy = 0
    folder = corpora_folder()
    for target in sorted(folder.iterdir()) if folder.is_dir() else []:
        if target.name.startswith(".") or not target.is_dir() or target.is_symlink():
            continue  # a staging folder a notebook is filling (`replace_folder`), or not ours
        try:
            with FileLock(f"{target}.lock", timeout=0):
                freed += sum(f.lstat().st_size for f in target.rglob("*") if f.is_file())
                shutil.rmtree(target)
                removed += 1
        except TimeoutError:  # filelock.Timeout: a notebook is writing this folder
            busy += 1
            continue
        Path(f"{target}.lock").unlink(missing_ok=True)
    return removed, freed, busy
