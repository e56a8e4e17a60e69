"""The answering face: cited answers from retrieved chunks, and what is measured about them.

What it is: `from ragkit.answering import name` for the answer stage, in the order a notebook
goes —
- answer: `answer` (one question: a cited `Answer` from its hits, through Claude's
  `search_result` blocks or the offline stand-in), `answer_run` (a whole question set),
  `sweep_answer_k` (how many chunks to hand the answerer, with tokens and dollars);
- offline extractive answers: `extractive_cases` (each question's features over its top-k
  passages), `extractive_scores` (answerable quoting the golden span, unanswerable declined),
  `decline_curve` (both against the decline threshold), `extractive_sentence` (the shares
  against this project's goals, in words), `calibrate` (the constants, on dev);
- score: `score_offline` (RAGAS-style columns without a judge: exact against the golden
  chunks, or named approximations), `score_judged` (the same metrics judged through a
  `ragkit.Judge`), `ragas_table` (means against the 2026 RAG best-practice notes' targets);
- diagnose: `span_coverage`, `diagnose` (each failing question blamed on the first stage that
  lost it: chunking, retrieval, reranking or generation), its answer `Outcome`,
  `stage_counts`;
- cache: `SemanticCache`, `load_paraphrases`, `replay_log`, `sweep` (a replayed query log at
  several cosine thresholds: hits and false hits).

What it is not: retrieval or its evaluation (`ragkit`: `Pipeline`, `judge`, `summarize`,
`LLM`, `Judge`, ...) nor the agent (`ragkit.agent`); nor a module the rest of ragkit imports
— it is a face over `ragkit.answer`, `ragkit.answer_runs`, `ragkit.answer_metrics`,
`ragkit.diagnose` and `ragkit.semantic_cache`, whose own objects it exports.

Why: notebook 04 and users import the answer stage from one module; `diagnose` and `sweep`
share the names of ragkit submodules, so they could not be attributes of the `ragkit` package.
Names load on first use (`ragkit.lazy`): `diagnose` alone does not load the Anthropic SDK.
"""
from ragkit.lazy import attach as _attach

_LAZY = {
    "ragkit.answer": ["Answer", "answer"],
    "ragkit.answer_runs": ["answer_run", "sweep_answer_k"],
    "ragkit.answer_metrics": ["ragas_table", "score_judged", "score_offline"],
    "ragkit.extractive_eval": ["calibrate", "decline_curve", "extractive_cases",
                               "extractive_scores", "extractive_sentence"],
    "ragkit.diagnose": ["Outcome", "diagnose", "span_coverage", "stage_counts"],
    "ragkit.semantic_cache": ["SemanticCache", "load_paraphrases", "replay_log", "sweep"],
}
__getattr__, __dir__ = _attach(__name__, _LAZY)

__all__ = [
    "Answer", "Outcome", "SemanticCache", "answer", "answer_run", "calibrate", "decline_curve",
    "diagnose", "extractive_cases", "extractive_scores", "extractive_sentence",
    "load_paraphrases",
    "ragas_table", "replay_log", "score_judged", "score_offline", "span_coverage",
    "stage_counts", "sweep", "sweep_answer_k",
]
