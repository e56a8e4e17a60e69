"""The `claude` contextualizer's prompts and default model, and a user's own chunk instruction
read from a file — without the Anthropic client, so the CLI can check a prompt (`ragkit index
--update --context-prompt`) before anything heavy loads.

The two prompts are Anthropic's, from its Contextual Retrieval cookbook (anthropics/
claude-cookbooks, capabilities/contextual-embeddings/guide.ipynb): the document goes in one
(cached) block, the chunk and the instruction in the next (`ragkit.contextualize.claude`).
"""
from __future__ import annotations

from pathlib import Path

from ragkit.documents import RagkitError, where

DEFAULT_MODEL = "claude-haiku-4-5"
DOCUMENT_CONTEXT_PROMPT = "\n<document>\n{doc_content}\n</document>\n"
CHUNK_CONTEXT_PROMPT = (
    "\nHere is the chunk we want to situate within the whole document\n<chunk>\n"
    "{chunk_content}\n</chunk>\n\nPlease give a short succinct context to situate this chunk "
    "within the overall document for the purposes of improving search retrieval of the "
    "chunk.\nAnswer only with the succinct context and nothing else.\n")
PLACEHOLDER = "{chunk_content}"


def load_prompt(path: Path | str) -> str:
    """A user's chunk instruction from a UTF-8 file; it must contain `{chunk_content}`."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RagkitError(f"{path}: cannot read the context prompt ({exc})") from None
    if PLACEHOLDER not in text:
        raise RagkitError(f"{where(path, None, PLACEHOLDER)}: missing; the prompt must say "
                          f"where the chunk goes")
    return text
