"""A `# comment` inside a Markdown code fence is no heading. A README's ```` ```bash ````
block of commented steps made "step 14: prepare component 14" the section of every chunk
after it, in its structural context and in `ragkit ask`'s citations, and a note without a
heading of its own was titled by the comment in its code block."""
from __future__ import annotations

from ragkit.assemble import blocks
from ragkit.citation_tags import section_at
from ragkit.chunking import ChunkerConfig, chunk_document
from ragkit.file_kinds import is_code_name
from ragkit.contextualize.structural import structural_contexts
from ragkit.document_folder import load_folder
from ragkit.documents import Document
from ragkit.folder_summary import file_summary
from ragkit.fences import passage_unfenced, unfenced
from ragkit.outline import outline
from ragkit.standin.contextualize import situate
from tests.test_extractive import ask, here, index_and_ask  # noqa: F401  (here: a fixture)

README = """\
# deploykit

deploykit ships a release to the fleet in three commands.

## Setup

```bash
# install the client
pip install deploykit
# log in once
deploykit login
```

~~~python
# configure the client
client = Client(region="eu-west-1")
~~~

## Rollback

Run deploykit rollback with the release number to return the fleet to it within two minutes.
"""


def test_unfenced_blanks_only_the_hashes_that_open_lines_inside_a_fence():
    text = ("# Title\n```sh\n# a comment\necho '# kept'\n```\n# After\n"
            "````\n```\n# still inside\n````\n## Last\n")
    marked = unfenced(text)
    assert len(marked) == len(text)
    assert [line for line in marked.splitlines() if line.startswith("#")] == [
        "# Title", "# After", "## Last"]
    assert [(a, b) for a, b in zip(text, marked) if a != b] == [("#", " "), ("#", " ")]
    assert unfenced("# Plain\n\ntext\n") == "# Plain\n\ntext\n"
    # inline code at a line's start opens no fence; a fence never closed runs to the end
    assert unfenced("```x``` is inline\n# Heading\n") == "```x``` is inline\n# Heading\n"
    assert unfenced("```\n# a\n# b\n") == "```\n  a\n  b\n"


def test_headings_sections_and_contexts_skip_the_comments_in_code_fences():
    doc = Document("README.md", README, "deploykit", {})
    at = README.index("Run deploykit rollback")
    assert outline(README).headings(at) == ["deploykit", "Rollback"]
    assert outline(README).headings(README.index("client = Client")) == ["deploykit", "Setup"]
    big = README + "\n" + "Filler sentence for the long document. " * 200  # past DIRECT
    assert outline(big).headings(len(big) - 5) == ["deploykit", "Rollback"]
    chunks = chunk_document(doc, ChunkerConfig(size=40, overlap=0))
    sections = {tuple(c.metadata["section"]) for c in chunks}
    assert sections <= {(), ("deploykit",), ("deploykit", "Setup"), ("deploykit", "Rollback")}
    contexts = structural_contexts(doc, chunks)
    assert not any("install the client" in c or "configure the client" in c
                   for c in contexts)
    assert section_at(["deploykit", "Setup"], [README[README.index("```bash"):at]]) == [
        "deploykit", "Rollback"]
    assert situate("```sh\n# nightly backup, do not edit\nrsync -a /srv /backup\n```\n",
                   "rsync -a /srv /backup").startswith("Document: ```sh.")


def test_a_note_without_a_heading_is_not_titled_by_a_comment_in_its_code(tmp_path, here):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "backup.md").write_text(
        "Backups run every night at 02:00 and are kept for thirty days.\n\n"
        "```sh\n# nightly backup, do not edit\nrsync -a /srv /backup\n```\n")
    (docs / "README.md").write_text(README)
    loaded = load_folder(docs, progress=False)
    assert {d.id: d.title for d in loaded} == {"backup.md": "backup.md", "README.md": "deploykit"}
    assert {row["file"]: row["headings"] for row in file_summary(loaded)} == {
        "backup.md": 0, "README.md": 3}  # the file table counts no fenced comment
    done = index_and_ask(here, tmp_path, docs, "How do I roll back a release?")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "[1] README.md#0 — deploykit / Rollback"
    assert "client" not in done.stdout.split("[1] ", 1)[-1]


def test_a_passage_starting_inside_a_fence_keeps_the_headings_after_it():
    """The chunker cuts a long code block, so a passage may start inside a fence: read as
    opening, its closing "```" blanked every real heading after it (a citation lost
    "Usage"). A passage whose first fence line is bare and closes (odd count, or the next
    has an info string) starts inside one."""
    assert section_at(["Guide", "Install"], blocks(
        "pip install foo\n```\n\n## Usage\n\nRun foo.\n")) == ["Guide", "Usage"]
    assert section_at(["Guide"], blocks(
        "# configure it\nfoo init\n```\n## Usage\n```bash\n# done\n```\nRun foo.\n")) == [
        "Guide", "Usage"]
    # bare fences opened and closed inside the passage: it starts outside
    assert section_at(["Guide"], blocks("## A\n```\n# c\n```\n## B\nx")) == ["Guide", "B"]
    assert passage_unfenced("## A\n```bash\n# c\n```\n") == "## A\n```bash\n  c\n```\n"


def test_a_fence_in_a_list_item_and_the_chunker_s_cuts_skip_fenced_comments():
    text = "# Guide\n\n- ```bash\n  pip install x\n  ```\n\n## Usage\n\nRun it.\n"
    assert outline(text).headings(text.index("Run it")) == ["Guide", "Usage"]
    steps = "\n".join(f"# step {i}: prepare component {i}\nrun component {i} --fast"
                      for i in range(60))
    doc = Document("README.md", f"# deploykit\n\n## Setup\n\n```bash\n{steps}\n```\n\n"
                   "## Rollback\n\nRun deploykit rollback.\n", "deploykit", {})
    chunks = chunk_document(doc, ChunkerConfig(size=128, overlap=0))
    assert {tuple(c.metadata["section"]) for c in chunks} <= {
        ("deploykit",), ("deploykit", "Setup"), ("deploykit", "Rollback")}


def test_a_build_file_in_a_folder_with_a_dot_in_its_name_is_source():
    assert is_code_name("my.proj/Dockerfile") and is_code_name("services/api.v2/Makefile")
    assert not is_code_name("my.proj/README") and is_code_name("build/Dockerfile")
