"""ragkit: a notebook workbench for retrieval-augmented generation.

What it is: the public face of retrieval and its evaluation. Everything below is
`from ragkit import name`; in pipeline order:

- load: `load_shipped`, `load_cookbook`, `load_beir`, `load_dataset`, `load_folder` (PDF,
  HTML and Word files too) and `file_summary` (what each file gave), `example_chunk` (one
  to show) and `chunk_label` (its id and pages), `sample_folder` (the mixed-format sample
  notebook 08 reads) and `folder_label` (a folder's name in captions),
  `load_documents_jsonl`, `load_queries_jsonl`; the records `Document`, `Query`, `Golden`,
  `Dataset`, `Chunk`; `RagkitError`, the one error bad input raises;
- chunk: `ChunkerConfig`, `chunk_document`, `chunk_documents`;
- contextualize: `get_contextualizer`; `projection_table` (what Claude's contexts would cost);
- index and search: `IndexConfig`, `SearchConfig`, `Pipeline`, `compare`, `evaluate_configs`,
  `get_tokenizer` (BM25's tokenizers);
- fuse: `fuse`, `rrf`, `weighted_rank`, `weighted_scores`; tune the fusion: `candidate_lists`,
  `fusion_methods`, `sweep_alpha`, `sweep_rrf_k`, `sweep_chunking`, `best_alpha`,
  `best_rrf_k`, `sweep_table`;
- rerank: `sweep_candidates` (how many candidates to rerank), `timed_run`,
  `rerank_step_times`, `latency_table`, `latency_sentence` (what that table shows);
- evaluate: `judge`, `per_query`, `summarize`, `summary_table`, `by_kind`,
  `confidence_table`, `first_relevant_rank`, `round_metrics`, `bootstrap_ci`, `paired_test`;
  Anthropic's Contextual Retrieval ladder: `default_rungs`, `build_indexes`, `ladder_table`,
  `ladder_note`, `context_routes`, `compare_routes`;
- watch: `zero_results`, `OFF_TOPIC_EXAMPLES` (queries the corpus cannot answer);
- Claude and its cost: `LLM` (cached, metered calls), `Judge` (versioned judge prompts),
  `has_api_key`, `make_client`, `run_usage`, `price`, `seed_cost_table`.

What it is not: cited answers and what is measured about them are `ragkit.answering`; the
agent, CRAG, Self-RAG and long context are `ragkit.agent`; recording a notebook's findings
is `ragkit.cookbook`, its figures `ragkit.plots`. `ladder` and the fusion sweep's
`evaluate` are imported from their modules (`from ragkit.ladder import ladder`,
`from ragkit.tune import evaluate`): they carry the name of a ragkit submodule, and a
package attribute cannot be a function and a submodule at once.

Why this shape: notebooks and users import from a few faces instead of fifteen modules, and
`import ragkit` stays cheap (about 25 ms, no numpy or pandas): every name is bound from its
home module on first use (`ragkit.lazy`), so `ragkit --help`, the data set loaders, the
Anthropic SDK and SciPy's statistics load only when something needs them. Each exported
name is its home module's object. The root also names the offline stand-in as Claude's
backend when no key is set (`ragkit.llm_backends`); it is imported on the first offline call.
"""
from ragkit.lazy import attach as _attach
from ragkit.llm_backends import register_offline_module as _register_offline

__version__ = "0.1.0"

# Offline (no ANTHROPIC_API_KEY), Claude calls are answered by the offline stand-in, a face of
# its own: named here, imported on the first offline call, never by the online path.
_register_offline("ragkit.standin")

_LAZY = {
    "ragkit.chunking": ["ChunkerConfig", "chunk_document", "chunk_documents"],
    "ragkit.documents": ["Chunk", "Dataset", "Document", "Golden", "Query", "RagkitError",
                         "load_documents_jsonl", "load_queries_jsonl"],
    "ragkit.evaluate": ["bootstrap_ci", "by_kind", "confidence_table", "first_relevant_rank",
                        "judge", "per_query", "round_metrics", "summarize", "summary_table"],
    "ragkit.fusion": ["fuse", "rrf", "weighted_rank", "weighted_scores"],
    "ragkit.pipeline": ["IndexConfig", "Pipeline", "SearchConfig", "compare", "evaluate_configs"],
    "ragkit.datasets": ["load_beir", "load_cookbook", "load_dataset", "load_shipped"],
    "ragkit.document_folder": ["load_folder"],
    "ragkit.folder_summary": ["chunk_label", "example_chunk", "file_summary"],
    "ragkit.sample_collection": ["folder_label", "sample_folder"],
    "ragkit.contextualize": ["get_contextualizer"],
    "ragkit.contextualize.claude": ["projection_table"],
    "ragkit.lexical": ["get_tokenizer"],
    "ragkit.tune": ["best_alpha", "best_rrf_k", "candidate_lists", "fusion_methods",
                    "sweep_alpha", "sweep_chunking", "sweep_rrf_k", "sweep_table"],
    "ragkit.rerank_sweep": ["sweep_candidates"],
    "ragkit.rerank_timing": ["latency_sentence", "latency_table", "rerank_step_times",
                             "timed_run"],
    "ragkit.stats": ["paired_test"],
    "ragkit.ladder": ["build_indexes", "compare_routes", "context_routes", "default_rungs",
                      "ladder_note", "ladder_table"],
    "ragkit.alerts": ["OFF_TOPIC_EXAMPLES", "zero_results"],
    "ragkit.llm": ["LLM", "has_api_key", "make_client", "run_usage"],
    "ragkit.answer_judge": ["Judge"],
    "ragkit.pricing": ["price", "seed_cost_table"],
}
__getattr__, __dir__ = _attach(__name__, _LAZY)

__all__ = [
    "Chunk", "ChunkerConfig", "Dataset", "Document", "Golden", "IndexConfig", "Judge", "LLM",
    "OFF_TOPIC_EXAMPLES", "Pipeline", "Query", "RagkitError", "SearchConfig", "best_alpha",
    "best_rrf_k", "bootstrap_ci", "build_indexes", "by_kind", "candidate_lists", "chunk_document",
    "chunk_documents", "chunk_label", "compare", "compare_routes", "confidence_table",
    "context_routes",
    "default_rungs", "evaluate_configs", "example_chunk", "file_summary", "first_relevant_rank",
    "folder_label", "fuse", "fusion_methods",
    "get_contextualizer", "get_tokenizer", "has_api_key", "judge", "ladder_note",
    "ladder_table", "latency_sentence", "latency_table", "load_beir", "load_cookbook",
    "load_dataset", "load_documents_jsonl",
    "load_folder", "load_queries_jsonl", "load_shipped", "make_client", "paired_test",
    "per_query", "price", "projection_table", "rerank_step_times", "round_metrics", "rrf",
    "run_usage", "sample_folder", "seed_cost_table", "summarize", "summary_table", "sweep_alpha",
    "sweep_candidates", "sweep_chunking", "sweep_rrf_k", "sweep_table", "timed_run",
    "weighted_rank", "weighted_scores", "zero_results",
]
