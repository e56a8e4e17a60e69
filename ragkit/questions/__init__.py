"""A golden set out of a folder: generate questions, review them, accept the reviewed ones.

What it is, for a notebook or a script (the command line is `ragkit questions`):
- `documents_of(path)`: the documents (and shipped chunks) of anything `ragkit index` reads;
- `generate(documents, n=100, kinds=None, model="claude-haiku-4-5", seed=0)` → (questions,
  report): Claude (offline: the stand-in's documented rule) writes questions with exact
  answer spans about sampled chunks, filtered and counted (`ragkit.questions.generation`);
- `write_golden(questions, path)` / `read_golden(path)`: the JSONL `ragkit eval --questions`
  reads;
- `write_review(questions, path)`: the sheet a domain expert marks keep yes/no
  (`review_sheet`: the same, but a sheet already reviewing these questions is kept;
  `sheet_preview(path, n)`: its first rows as a table, each cell on one line;
  `question_preview(questions)`: generated questions as a table, each cell on one line);
  `accept(review_path, golden_path)`: the kept questions, edits checked
  (`ragkit.questions.review`);
- `compare_sets(documents, human, synthetic)`: does a synthetic set rank retrieval
  configurations as a human-written one does — Kendall's tau with a bootstrap interval
  (`ragkit.questions.trust`);
- `config_runs`, `method_table`, `verdict`: every configuration against the default with a
  paired test, and "on this folder, use …" (`ragkit.questions.choose`).
Each name is imported on first use (`ragkit.lazy`), so the command line's parser reads the
defaults (`ragkit.questions.defaults`) without loading the Anthropic SDK.
What it is not: a judge of question quality; the expert's review is.
"""
from __future__ import annotations

from ragkit.lazy import attach as _attach

_LAZY = {
    "ragkit.questions.defaults": ["DEFAULT_SHARES", "DUP_THRESHOLD", "KINDS"],
    "ragkit.questions.generation": ["DEFAULT_MODEL", "OFFLINE_GENERATOR", "documents_of",
                                  "generate"],
    "ragkit.questions.report": ["STAGES", "Report"],
    "ragkit.questions.preview": ["question_preview"],
    "ragkit.questions.choose": ["config_runs", "method_table", "verdict"],
    "ragkit.questions.trust": ["Agreement", "agreement", "as_queries", "check_default",
                               "compare_sets", "default_configs", "metric_matrix"],
    "ragkit.questions.review": ["accept", "fingerprint", "is_golden_file", "read_golden",
                                "review_sheet", "sheet_preview", "source_text", "write_golden",
                                "write_review"],
    "ragkit.questions.sheets": ["is_review_csv"],
}
__getattr__, __dir__ = _attach(__name__, _LAZY)

__all__ = ["DEFAULT_MODEL", "DEFAULT_SHARES", "DUP_THRESHOLD", "KINDS", "OFFLINE_GENERATOR",
           "STAGES", "Agreement", "Report", "accept", "agreement", "as_queries", "check_default",
           "compare_sets", "config_runs", "default_configs", "documents_of", "fingerprint",
           "generate", "is_golden_file",
           "is_review_csv", "method_table", "metric_matrix", "question_preview", "read_golden",
           "review_sheet",
           "sheet_preview", "source_text", "verdict", "write_golden", "write_review"]
