"""Shared `main` for the generators: write their files, or with --check compare them."""
from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path


def write_or_check(description: str, render: Callable[[], dict[Path, str]],
                   argv: list[str] | None = None) -> int:
    """Write every rendered file, or (--check) exit 1 if any committed file differs."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--check", action="store_true", help="compare instead of writing")
    args = ap.parse_args(argv)
    files = render()
    stale = [p for p, text in files.items()
             if not p.exists() or p.read_text(encoding="utf-8") != text]
    if args.check:
        if stale:
            print(f"{len(stale)} file(s) differ from the generator, e.g. {stale[0]}",
                  file=sys.stderr)
            return 1
        print(f"checked {len(files)} file(s)")
        return 0
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    print(f"wrote {len(files)} file(s)")
    return 0
