"""Kiwi, the Korean morpheme analyser behind the `korean` tokenizer, loaded once per process.

What it is: `load()`, the process-wide `kiwipiepy.Kiwi`, made on first use (its model takes
about 2 s and 0.5 GB to load).

Why its own module: loading it can fail in ways Python cannot catch. Under an address-space
limit (`ulimit -v`, `prlimit --as`) Kiwi's allocator (mimalloc, linked into kiwipiepy)
reserves a 1 GiB arena on import when the limit allows it, and Kiwi then aborts the whole
process on `std::bad_alloc` while loading its model, with no message Python could reword
(limits from 300 MB to 1.5 GB did so). So under a limit the arena is not reserved up front
(`MIMALLOC_ARENA_RESERVE=0`, unless set already) and a limit leaving less than `NEEDS` is an
`OutOfMemory` before anything loads; an import that failed for want of memory is that too,
not advice to pip install a package that is installed.

What it is not: a guarantee. Memory another thread takes while the model loads can still
end in the abort; without a limit, the kernel's OOM killer is what stops a process.
"""
from __future__ import annotations

import os
from functools import lru_cache

from ragkit.errors import RagkitError
from ragkit.memory import MB, OutOfMemory, headroom, megabytes, out_of_memory

NEEDS = 650 * MB  # address space the model takes to load (620 MB measured, kiwipiepy 0.24)


@lru_cache(maxsize=1)
def load():
    """The process-wide Kiwi analyser (module docstring for what a memory limit changes)."""
    left = headroom()
    if left is not None:
        os.environ.setdefault("MIMALLOC_ARENA_RESERVE", "0")  # read when kiwipiepy loads
        if left < NEEDS:
            raise OutOfMemory(f"the Korean tokenizer's model, kiwipiepy, needs about "
                              f"{megabytes(NEEDS)} of address space and the limit (ulimit "
                              f"-v) leaves {megabytes(left)}")
    try:
        from kiwipiepy import (
            Kiwi,  # deferred: only the Korean tokenizers need it (~2 s model)
        )
    except ImportError as err:
        if out_of_memory(err):
            raise
        raise RagkitError("the 'korean' tokenizer needs kiwipiepy and kiwipiepy-model: "
                          "pip install kiwipiepy kiwipiepy-model") from err
    return Kiwi()
