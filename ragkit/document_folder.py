"""A folder of text files as documents: the shipped corpus's layout, and any user's.

What it is: `load_folder(root)` — every Markdown, text or source file under `root` becomes a
`Document` whose id is its posix path relative to `root`; a file may open with `---`-fenced
`key: value` front matter, which becomes metadata (and the title), not text.

What it is not: a crawler (no links followed, no binary formats such as PDF or DOCX) nor a
watcher: re-read the folder (or `ragkit index --update`) after files change.
"""
from __future__ import annotations

import re
from pathlib import Path

from ragkit.documents import Document, RagkitError, check_text

TEXT_SUFFIXES = {".md", ".txt", ".rst", ".py", ".ts", ".js", ".java", ".go", ".rs", ".c",
                 ".h", ".cpp", ".hpp", ".json", ".yaml", ".yml", ".toml", ".sql", ".sh"}
_FRONT = re.compile(r"\A---\n(.*?)\n---\n", re.S)


def split_front_matter(raw: str) -> tuple[dict[str, str], str]:
    """Split a `---`-fenced block of `key: value` lines off the top of a text file."""
    match = _FRONT.match(raw)
    if not match:
        return {}, raw
    meta = {}
    for entry in match.group(1).splitlines():
        key, sep, value = entry.partition(":")
        if sep and key.strip():
            meta[key.strip()] = value.strip()
    return meta, raw[match.end():].lstrip("\n")


def _title_of(meta: dict[str, str], text: str, rel: str) -> str:
    if meta.get("title"):
        return meta["title"]
    if rel.endswith((".md", ".txt", ".rst")):
        heading = re.search(r"^#\s+(.+)$", text, re.M)
        if heading:
            return heading.group(1).strip()
    return rel


def load_folder(root: Path | str) -> list[Document]:
    """Every text file under `root` is a document; its id is its posix path relative to root.

    Markdown/text files may open with front matter (`key: value` lines between `---`
    fences): it becomes metadata (and `title`), not text. Files named like a manifest or
    starting with a dot are skipped.
    """
    root = Path(root)
    if not root.is_dir():
        raise RagkitError(f"{root}: not a folder")
    docs = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = path.relative_to(root).as_posix()
        hidden = any(part.startswith(".") for part in path.relative_to(root).parts)
        if path.suffix not in TEXT_SUFFIXES or hidden:
            continue
        try:
            raw = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise RagkitError(f"{path}: not UTF-8 text") from None
        meta, text = split_front_matter(raw.replace("\r\n", "\n"))
        check_text(text, path, None)
        meta = {**meta, "path": rel}
        docs.append(Document(rel, text, _title_of(meta, text, rel), meta))
    if not docs:
        raise RagkitError(f"{root}: no text files")
    return docs
