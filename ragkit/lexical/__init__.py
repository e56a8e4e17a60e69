"""Lexical retrieval: tokenizers chosen by name (`tokenizers`) and Okapi BM25 (`bm25`).

The sparse half of hybrid retrieval. `from ragkit.lexical import BM25, get_tokenizer,
TOKENIZERS` is the public entry point; the modules hold the details and their sources.
"""

from ragkit.lexical.bm25 import BM25, okapi_idf, okapi_tf
from ragkit.lexical.tokenizers import (
    ENGLISH_STOPWORDS,
    KOREAN_CONTENT_TAGS,
    TOKENIZERS,
    Tokenizer,
    auto,
    code,
    english,
    get_tokenizer,
    identifier_parts,
    korean,
    words,
)

__all__ = [
    "BM25", "ENGLISH_STOPWORDS", "KOREAN_CONTENT_TAGS", "TOKENIZERS", "Tokenizer", "auto",
    "code", "english", "get_tokenizer", "identifier_parts", "korean", "okapi_idf", "okapi_tf",
    "words",
]
