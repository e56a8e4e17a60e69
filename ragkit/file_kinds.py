"""What kind of file a document is, judged by its name: source, configuration or prose.

What it is: the suffix and name lists (`CODE_SUFFIXES`, `CODE_NAMES`, `PROSE_SUFFIXES`,
`LANGUAGES`) and the tests on them that the chunker (code is cut at definitions, prose at headings), the
structural contextualizer, the answerers (a "#" line in a source file is a comment, not a
heading) and the folder reader (which files are read at all) share.

What it is not: a content sniffer. A file is judged by its path or id alone, so a Python
script saved as `notes.txt` is prose; a configuration file's own rules are in
`ragkit.config_keys`.
"""
from __future__ import annotations

from pathlib import PurePosixPath

from ragkit.config_keys import CONFIG_SUFFIXES
from ragkit.documents import Document
from ragkit.loaders import LOADERS

CODE_SUFFIXES = {".py", ".ts", ".js", ".java", ".go", ".rs", ".c", ".h", ".cpp", ".hpp",
                 ".cc", ".cs", ".rb", ".php", ".kt", ".swift", ".scala", ".sh", ".sql"}

# Source files named without a suffix, in lower case: a build or container recipe; also
# with a variant after a dot (`is_recipe_name`: Dockerfile.dev).
CODE_NAMES = {"dockerfile", "containerfile", "makefile", "gnumakefile", "jenkinsfile",
              "vagrantfile", "procfile"}
PROSE_SUFFIXES = (".md", ".markdown", ".txt", ".text", ".rst")  # a "# " line may title them
# The language a source or configuration file is written in, by suffix: a question names it
# ("the Python client's timeout") where the file's text never does (`language`).
LANGUAGES = {".py": "Python", ".ts": "TypeScript", ".js": "JavaScript", ".java": "Java",
             ".go": "Go Golang", ".rs": "Rust", ".c": "C", ".h": "C", ".cpp": "C++ CPP",
             ".hpp": "C++ CPP", ".cc": "C++ CPP", ".cs": "C# CSharp", ".rb": "Ruby",
             ".php": "PHP", ".kt": "Kotlin", ".swift": "Swift", ".scala": "Scala",
             ".sh": "Shell Bash", ".sql": "SQL", ".yaml": "YAML", ".yml": "YAML",
             ".toml": "TOML", ".json": "JSON"}


def doc_name(doc: Document) -> str:
    """The document's path, else its id: what its kind is judged by."""
    return str(doc.metadata.get("path") or doc.id)


def is_code(doc: Document) -> bool:
    """True for source and configuration files, judged by the suffix of the document's path
    or id (`is_code_name`)."""
    return is_code_name(doc_name(doc))


def is_code_name(name: str) -> bool:
    """True for the path or id of a source file — its suffix is one of `CODE_SUFFIXES`, or
    it is named as one of `CODE_NAMES` is (`Dockerfile`) — or of a configuration file
    (`ragkit.config_keys.CONFIG_SUFFIXES`: YAML, TOML, JSON), which is read as code is: line by
    line, a "#" line a comment, never a Markdown heading."""
    base = name.rpartition("/")[2]  # "my.proj/Dockerfile" has no suffix
    if "." not in base:  # no suffix (the common case, without building a path object)
        return base.lower() in CODE_NAMES
    suffix = PurePosixPath(name).suffix.lower()
    return suffix in CODE_SUFFIXES or suffix in CONFIG_SUFFIXES or is_recipe_name(base)


def is_recipe_name(base: str) -> bool:
    """True for a file name (no folder) of `CODE_NAMES`, alone or with a variant after a dot
    — `Dockerfile.dev`, `Makefile.linux`, `Jenkinsfile.release` were left out as files of
    the unknown types ".dev", ".linux" — unless that suffix is a document's
    (`Dockerfile.md`, notes about one, is Markdown; `Makefile.py` is Python)."""
    stem, dot, _ = base.lower().partition(".")
    if stem not in CODE_NAMES:
        return False
    suffix = PurePosixPath(base).suffix.lower()
    return not dot or suffix not in (*PROSE_SUFFIXES, *LOADERS, *CODE_SUFFIXES,
                                     *CONFIG_SUFFIXES)


def language(name: str) -> str:
    """The language the file `name` (a path or id) is written in, by its suffix
    (`LANGUAGES`): "Python" for `client.py`; "" for any other file, a recipe (`Dockerfile`)
    included. Not read from the text: a `.txt` holding Python is prose here."""
    return LANGUAGES.get(PurePosixPath(name).suffix.lower(), "")

