"""JSON Lines read line by line, each failure one line naming the file, the line and the field.

What it is: `read_jsonl(path)` (number, object) for each non-blank line, `parse_line` for one
line's bytes (orjson first, the standard library for what orjson refuses; a key given twice
refused), `parse_json` and `read_json`, JSON of any source read or refused in one line (every
JSON reader's), `require`, a field of an object checked for type, `require_page_map`, a
document's `metadata.pages` checked as a page map, and `golden_files`, the question files of
a golden folder. What it is not: a schema: the loaders of
`ragkit.documents` say which fields a format has. `ragkit.documents` re-exports these.
"""
from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any, Iterator

from ragkit.errors import RagkitError, RagkitWarning, not_a_file, where
from ragkit.fastjson import NOT_PARSED, fast_json, surrogate_field
from ragkit.outline import label


JSONL_SUFFIXES = (".jsonl", ".json", ".ndjson")  # a file named so is read as JSON Lines
FEW_KEYS = 32  # a row of more keys is checked for a repeated one by parsing it (`repeated_key`)
# Files named as another format, said so when their first line is not JSON
OTHER_FORMATS = {".csv": "a CSV file", ".tsv": "a tab-separated file", ".trec": "a TREC run",
                 ".xlsx": "a spreadsheet", ".md": "Markdown", ".txt": "text"}


def jsonl_in(folder: Path) -> list[Path]:
    """The `*.jsonl` files of `folder`, the suffix in any case (`Q.JSONL`), by name."""
    return [p for p in sorted(folder.iterdir()) if _is_jsonl(p)]


def _is_jsonl(path: Path) -> bool:
    return path.suffix.lower() == ".jsonl" and path.is_file()


def golden_files(folder: Path) -> list[Path]:
    """The question files of a golden folder: its `*.jsonl`, the suffix in any case
    (`Q.JSONL`). Its other JSON files (`q.json`, `q.ndjson`) and sub-folders holding
    `.jsonl` files are not read, and one warning names them: a folder of `a.jsonl` and
    `b.json` scored a's questions alone without a word. A `*.jsonl` entry that is no regular
    file (a link whose file was moved, a FIFO, a link to a device) is returned, for its reader
    to refuse in one line (`read_jsonl`): its questions were dropped without a word."""
    entries = sorted(folder.iterdir())
    left = [p.name for p in entries if p.suffix.lower() in JSONL_SUFFIXES and p.is_file()
            and not _is_jsonl(p)]
    left += [f"{p.name}/" for p in entries if p.is_dir() and any(map(_is_jsonl, p.rglob("*")))]
    if left:
        warnings.warn(RagkitWarning(f"{folder}: not read: {', '.join(left[:5])}"
                                    f"{' …' if len(left) > 5 else ''} (questions are read "
                                    f"from the folder's *.jsonl files only)"), stacklevel=3)
    return [p for p in entries if p.suffix.lower() == ".jsonl" and not p.is_dir()]


def read_jsonl(path: Path | str) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (line number, object) for each non-blank line; malformed JSON names the line."""
    path = Path(path)
    if not path.is_file():
        raise not_a_file(path)
    with path.open("rb") as handle:
        first = True  # until the first object: a file of another format fails there
        for number, raw in enumerate(handle, start=1):
            if number == 1:
                raw = raw.removeprefix(b"\xef\xbb\xbf")  # a byte-order mark (Notepad's UTF-8)
            try:
                obj = parse_line(raw, path, number)
            except RagkitError as exc:
                if first and path.suffix.lower() in OTHER_FORMATS:  # a review sheet swapped in
                    raise RagkitError(f"{exc}: {path.name} is {OTHER_FORMATS[path.suffix.lower()]}"
                                      f", not JSON Lines (one JSON object per line)") from None
                raise
            if obj is not None:
                first = False
                yield number, obj


def parse_line(raw: bytes, path: Path, number: int) -> dict[str, Any] | None:
    """One JSONL line as an object, None for a blank line; bad JSON names file and line."""
    if not raw.strip():
        return None
    obj = fast_json(raw)
    if obj is NOT_PARSED:
        obj = _strict_json(raw, path, number)
    if not isinstance(obj, dict):
        raise RagkitError(f"{where(path, number)}: expected a JSON object")
    key = repeated_key(raw, obj)
    if key is not None:
        raise RagkitError(f"{where(path, number, key)}: given twice in one object (JSON "
                          f"readers keep the last silently); keep one")
    return obj


def repeated_key(raw: bytes, obj: dict[str, Any]) -> str | None:
    """The first top-level key the JSON object `raw` (parsed as `obj`) writes twice, or None.
    Every parser keeps the last value silently, so `{"id": "a", "text": …, "id": "b"}` was
    document b. Only a line in which some key's quoted name occurs twice is parsed again
    (pairs kept); keys written with escapes are not compared, nor are nested objects'."""
    if len(obj) <= FEW_KEYS:  # about 1.5 µs a document row: a plain count of each name
        for key in obj:
            if raw.count(b'"%b"' % key.encode()) > 1:
                break
        else:
            return None  # (a count per key of a row of 40,000 keys took 11 s: those are parsed)
    try:
        pairs = json.loads(raw, object_pairs_hook=lambda pairs: pairs)
    except RecursionError:  # read by orjson, deeper than Python's stack: not compared
        return None
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            return key
        seen.add(key)
    return None


def _strict_json(raw: bytes, path: Path, number: int) -> Any:
    """A line orjson refused, parsed by `parse_json` (the standard library also reads NaN and
    big integers), refused when it holds a lone surrogate (`\\ud800` escaped alone: not text
    any file can hold, so every later write of it would fail)."""
    obj = parse_json(raw, path, number)
    key = surrogate_field(raw, obj)
    if key is not None:
        raise RagkitError(f"{where(path, number, key)}: holds a lone surrogate (an escaped "
                          f"\\ud800-\\udfff without its pair), not text")
    return obj


class MalformedJSON(RagkitError):
    """Text that is no JSON at all (a syntax error, bytes that are not UTF-8), as `parse_json`
    raises it: a caller that reads such text otherwise (`-p name=words` is a string) can tell
    it from JSON that is too deep or holds too long a number, which stays an error."""


def parse_json(raw: bytes | str, place: Path | str, line: int | None = None) -> Any:
    """`raw` parsed by the standard library, or one RagkitError naming `place` — a file (a
    `Path`: a syntax error names the file's line, or `line`, that of a JSONL row) or an
    option (`"--args"`) — and why: not UTF-8, malformed JSON (`MalformedJSON`), nested deeper
    than Python's stack (`[` × 100,000 raised RecursionError, a traceback, at every reader
    that called `json.loads` itself), a number of over 4,300 digits. Every reader of JSON a
    user gave or a disk holds goes through here. What it is not: a check of the value's
    shape, which each reader makes (`parse_line`: an object; `read_manifest`: its fields)."""
    where_it = where(place, line)
    try:
        return json.loads(raw.decode("utf-8") if isinstance(raw, bytes) else raw)
    except UnicodeDecodeError as exc:
        raise MalformedJSON(f"{where_it}: not UTF-8 text ({exc.reason})") from None
    except json.JSONDecodeError as exc:
        if line is None and isinstance(place, Path):
            where_it = where(place, exc.lineno)
        # "Unterminated string starting at", "Invalid control character at": json puts the
        # place after the message, which alone ended on a dangling "at"
        said = f"{exc.msg} column {exc.colno}" if exc.msg.endswith(" at") else exc.msg
        raise MalformedJSON(f"{where_it}: malformed JSON ({said})") from None
    except RecursionError:
        raise RagkitError(f"{where_it}: malformed JSON (nested too deeply)") from None
    except ValueError:  # an integer of over 4,300 digits (Python's limit on reading one)
        raise RagkitError(f"{where_it}: a number of over 4,300 digits; write it as a "
                          f"string") from None


def read_json(path: Path | str) -> Any:
    """The JSON file at `path` (an `index.json`, a model, a marker) by `parse_json`; OSError
    is left to the caller, which knows whether a missing file is an error or an answer."""
    return parse_json(Path(path).read_bytes(), Path(path))


def has_format(path: Path | str, fmt: str) -> bool:
    """True for a readable JSON object whose `format` is `fmt` (a file ragkit wrote, which it
    may replace); False for anything else, a missing file included."""
    try:
        return read_json(path).get("format") == fmt
    except (OSError, ValueError, AttributeError):
        return False


def require(obj: dict, key: str, kind: type | tuple[type, ...], path: Path | str, line: int,
            default: Any = ..., non_empty: bool = False) -> Any:
    """Fetch `obj[key]` checking its type; a missing or wrong field names file, line, field."""
    if key not in obj or obj[key] is None:
        if default is ...:
            raise RagkitError(f"{where(path, line, key)}: missing")
        return default
    value = obj[key]
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if not isinstance(value, kind) or (isinstance(value, bool) and bool not in kinds):
        names = "/".join(k.__name__ for k in kinds)  # true is no id: JSON's, not a number
        raise RagkitError(f"{where(path, line, key)}: expected {names}, "
                          f"got {type(value).__name__}")
    if isinstance(value, int) and value.bit_length() > 1024:  # str() refuses 4,300 digits
        raise RagkitError(f"{where(path, line, key)}: a number of over 300 digits; write it "
                          f"as a string")
    if non_empty and isinstance(value, str) and not value.strip():
        raise RagkitError(f"{where(path, line, key)}: empty")
    return value


def require_page_map(pages: Any, path: Path | str, line: int) -> None:
    """`metadata.pages` is a page map — `[[page, offset], ...]`, whole numbers, offsets
    ascending — or one line naming the field: citations read it as such, and
    `{"pages": 5}` stopped `ragkit index` with a TypeError traceback."""
    pairs = pages if isinstance(pages, list) else [None]
    ok = all(isinstance(p, list) and len(p) == 2 and all(
        isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in p) for p in pairs)
    offsets = [p[1] for p in pairs] if ok else []
    if not ok or offsets != sorted(offsets):
        raise RagkitError(f"{where(path, line, 'metadata.pages')}: expected a page map, "
                          f"[[page, offset], ...] with offsets ascending, "
                          f"got {label(repr(pages), 60)}")

