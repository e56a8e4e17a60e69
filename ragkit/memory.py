"""Running out of memory, said as such: what counts as it, and the one line that names it.

What it is:
- `out_of_memory(exc)`: whether an exception is the process running out of memory — a
  `MemoryError` (numpy's "Unable to allocate …" too), an `ImportError` or `OSError` whose
  cause is one or whose library could not be mapped ("failed to map segment from shared
  object", ENOMEM), or a thread that could not start under an address-space limit — looking
  through the exceptions it was raised from (scipy's "your install seems to be broken" is one).
- `describe(exc, step)`: `out of memory while STEP (WHY; the address space is limited to
  N MB by ulimit -v); nothing was replaced` — the step is the package being loaded when the
  failure struck inside an import (`loading numpy`), else the caller's (`searching`).
- `address_limit()`, `headroom()`: the address-space limit (`ulimit -v`, `prlimit --as`)
  and how much of it is left, None without a limit.
- `blas_threads()`: the OpenBLAS threads a command line under such a limit starts numpy with.
  Why: OpenBLAS reserves about 40 MB of address space per thread when numpy loads and, when
  it cannot start one, sends its own process SIGINT, which read as Ctrl-C.
- `OutOfMemory`: a `MemoryError` whose message is the whole reason (a step that checked
  `headroom()` before loading a model it could not fit).

Why: under a memory limit an allocation can fail anywhere, in an import most of all; a
traceback, or an ImportError's "pip install …" advice for a package that is installed, sends
the user after the wrong cause.

What it is not: a guard against the kernel's OOM killer (SIGKILL: nothing runs) or against
C++ code that aborts on `std::bad_alloc` (no Python handler runs either); `headroom()` lets a
step refuse before loading such code.
"""
from __future__ import annotations

import errno
import os
import traceback
from types import TracebackType

try:
    import resource
except ImportError:  # Windows: no address-space limit to read
    resource = None  # type: ignore[assignment]

MB = 1 << 20
BLAS_SPAN = 1 << 30  # address space per OpenBLAS thread allowed under a limit (1 GiB)
_MAPPING = ("failed to map segment", "cannot allocate memory")  # a library not mapped
_THREAD = "can't start new thread"


class OutOfMemory(MemoryError):
    """Not enough memory for a step, found before it began; the message says what and why."""


def address_limit() -> int | None:
    """The soft address-space limit in bytes (`ulimit -v`, `prlimit --as`), None when none."""
    if resource is None:
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    return None if soft == resource.RLIM_INFINITY else soft


def address_used() -> int | None:
    """This process's address space in bytes (VmSize), None where /proc cannot tell."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def headroom() -> int | None:
    """Bytes of address space left under the limit; None without a limit (or a reading)."""
    limit, used = address_limit(), address_used()
    return None if limit is None or used is None else max(0, limit - used)


def megabytes(size: int) -> str:
    """`size` bytes as whole megabytes: `180 MB`, `1,600 MB`."""
    return f"{size // MB:,} MB"


def blas_threads(cores: int) -> int | None:
    """OpenBLAS threads for numpy under an address-space limit — one per GiB of it, at least
    one, at most `cores` — or None without a limit (OpenBLAS then takes one per core)."""
    limit = address_limit()
    return None if limit is None else max(1, min(cores, limit // BLAS_SPAN))


def _chain(exc: BaseException) -> list[BaseException]:
    """`exc` and the exceptions it was raised from or during, innermost last."""
    seen: list[BaseException] = []
    while exc is not None and all(exc is not s for s in seen):
        seen.append(exc)
        exc = exc.__cause__ or exc.__context__
    return seen


def _memory_fault(exc: BaseException) -> bool:
    if isinstance(exc, MemoryError):
        return True
    if isinstance(exc, OSError) and exc.errno == errno.ENOMEM:
        return True
    text = str(exc).lower()
    if isinstance(exc, RuntimeError) and _THREAD in text:
        return address_limit() is not None  # else it may be the limit on processes
    return isinstance(exc, (ImportError, OSError)) and any(m in text for m in _MAPPING)


def out_of_memory(exc: BaseException) -> bool:
    """Whether `exc`, or one it was raised from, is the process running out of memory."""
    return any(_memory_fault(e) for e in _chain(exc))


def _reason(fault: BaseException) -> str:
    """A memory fault (`_memory_fault`), in a few words."""
    text = str(fault).strip()
    if isinstance(fault, MemoryError):
        return text or "an allocation failed"
    if _THREAD in text:
        return "a thread could not start"
    return "a shared library could not be mapped into memory"


def _loading(tb: TracebackType | None) -> str | None:
    """The package whose import was running where `tb` ends (its innermost module body),
    named as imported (`numpy`, `ragkit.pipeline`), or None outside an import."""
    found = None
    for frame in traceback.extract_tb(tb):
        if frame.name == "<module>" and not frame.filename.startswith("<"):
            found = frame.filename
    if found is None:
        return None
    parts = os.path.normpath(found).split(os.sep)
    site = next((n for n, p in enumerate(parts) if p in ("site-packages", "dist-packages")), None)
    if site is not None:  # dist-packages: Debian's and Ubuntu's system Python
        return parts[site + 1].removesuffix(".py").split(".")[0]
    if "ragkit" in parts:
        tail = parts[len(parts) - parts[::-1].index("ragkit") - 1:]
        return ".".join(tail).removesuffix(".py").removesuffix(".__init__")
    return os.path.basename(found).removesuffix(".py")


def describe(exc: BaseException, step: str) -> str:
    """The one line for `exc` (an `out_of_memory` one) struck while `step` was running."""
    fault = next(e for e in _chain(exc) if _memory_fault(e))
    package = None if isinstance(fault, OutOfMemory) else _loading(fault.__traceback__)
    why = _reason(fault)
    limit = address_limit()
    if limit is not None and not isinstance(fault, OutOfMemory):
        why += f"; the address space is limited to {megabytes(limit)} by ulimit -v"
    return (f"out of memory while {f'loading {package}' if package else step} ({why}); "
            f"nothing was replaced")
