"""ragkit's public face: `ragkit`, `ragkit.agent` and `ragkit.answering` export what the
notebooks and users call — each name its home module's own object — every notebook imports
from at most 5 ragkit modules, and `import ragkit` stays as cheap as it was."""
import ast
import importlib
import json
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest

import ragkit
import ragkit.agent
import ragkit.answering

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9]*.ipynb"))

# Each face's names by the module they live in (where notebooks imported them from before).
HOMES = {
    "ragkit": {
        "ragkit.documents": "Chunk Dataset Document Golden Query RagkitError "
                            "load_documents_jsonl load_queries_jsonl",
        "ragkit.datasets": "load_beir load_cookbook load_dataset load_shipped",
        "ragkit.document_folder": "load_folder",
        "ragkit.folder_summary": "chunk_label example_chunk file_summary",
        "ragkit.sample_collection": "folder_label sample_folder",
        "ragkit.chunking": "ChunkerConfig chunk_document chunk_documents",
        "ragkit.contextualize": "get_contextualizer",
        "ragkit.contextualize.claude": "projection_table",
        "ragkit.lexical": "get_tokenizer",
        "ragkit.pipeline": "IndexConfig Pipeline SearchConfig compare evaluate_configs",
        "ragkit.fusion": "fuse rrf weighted_rank weighted_scores",
        "ragkit.tune": "best_alpha best_rrf_k candidate_lists fusion_methods sweep_alpha "
                       "sweep_chunking sweep_rrf_k sweep_table",
        "ragkit.rerank_sweep": "sweep_candidates",
        "ragkit.rerank_timing": "latency_sentence latency_table rerank_step_times timed_run",
        "ragkit.evaluate": "bootstrap_ci by_kind confidence_table first_relevant_rank judge "
                           "per_query round_metrics summarize summary_table",
        "ragkit.stats": "paired_test",
        "ragkit.ladder": "build_indexes compare_routes context_routes default_rungs ladder_note "
                         "ladder_table",
        "ragkit.alerts": "OFF_TOPIC_EXAMPLES zero_results",
        "ragkit.llm": "LLM has_api_key make_client run_usage",
        "ragkit.answer_judge": "Judge",
        "ragkit.pricing": "price seed_cost_table",
    },
    "ragkit.agent": {
        "ragkit.agent.tool": "Tool ToolContext ToolResult",
        "ragkit.agent.tools": "TOOLS",
        "ragkit.agent.gate": "AllowAll DenyAll Scripted",
        "ragkit.agent.loop": "AgentResult run_agent",
        "ragkit.agent.runner": "run_with_tool_runner",
        "ragkit.agent.trace": "caching_table read_trace timeline trace_table",
        "ragkit.agent.result": "calls_summary",
        "ragkit.agent.views": "agent_finding caching_effect caching_prose caching_summary "
                              "calls_per_turn_sentence calls_table gate_result loop_vs_runner "
                              "tokens_figure tool_choice tool_table",
        "ragkit.agent.injection": "injection_outcome locate next_actions off_the_bug",
    },
    "ragkit.answering": {
        "ragkit.answer": "Answer answer",
        "ragkit.answer_runs": "answer_run sweep_answer_k",
        "ragkit.answer_metrics": "ragas_table score_judged score_offline",
        "ragkit.extractive_eval": "calibrate decline_curve extractive_cases extractive_scores "
                                  "extractive_sentence",
        "ragkit.diagnose": "Outcome diagnose span_coverage stage_counts",
        "ragkit.semantic_cache": "SemanticCache load_paraphrases replay_log sweep",
    },
}
AGENT_MODULES = {"compare", "crag", "long_context", "self_rag"}  # exported whole
FACES = {"ragkit": ragkit, "ragkit.agent": ragkit.agent, "ragkit.answering": ragkit.answering}
# absent after `import ragkit` before the faces existed; measured, and kept absent
HEAVY = ["numpy", "pandas", "ragkit.pipeline", "anthropic", "matplotlib", "scipy.stats", "sklearn", "pydantic", "httpx", "voyageai",
         "onnxruntime", "pymilvus", "IPython", "ragkit.agent", "ragkit.answering"]


def ragkit_modules(source: str) -> set[str]:
    """The ragkit modules code imports from, counted as the one-way check counts them:
    `from ragkit.agent import compare, crag` is one module, ragkit.agent."""
    return (set(re.findall(r"from (ragkit[\w.]*) import", source))
            | set(re.findall(r"^import (ragkit[\w.]*)", source, re.M)))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_each_notebook_imports_from_at_most_five_ragkit_modules(path):
    cells = json.loads(path.read_text())["cells"]
    source = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    used = ragkit_modules(source)
    assert "ragkit" in used and len(used) <= 5, sorted(used)


def test_the_count_takes_a_package_import_as_one_module():
    source = "import ragkit\nfrom ragkit.agent import compare, crag\nfrom ragkit import LLM\n"
    assert ragkit_modules(source) == {"ragkit", "ragkit.agent"}


@pytest.mark.parametrize("face", FACES)
def test_all_lists_exactly_the_exported_names(face):
    module = FACES[face]
    names = {n for names in HOMES[face].values() for n in names.split()}
    names |= AGENT_MODULES if face == "ragkit.agent" else set()
    assert len(module.__all__) == len(set(module.__all__))
    assert set(module.__all__) == names
    assert names <= set(dir(module))


@pytest.mark.parametrize("face", FACES)
def test_docstring_names_every_export(face):
    module = FACES[face]
    missing = [n for n in module.__all__ if f"`{n}`" not in module.__doc__]
    assert not missing


def test_every_export_is_its_home_modules_object_whatever_was_imported_first():
    """In a fresh process the home modules are imported first (as the notebooks did), then
    each face's names are read: the same objects, `ragkit.judge` included once the LLM
    judge's module `ragkit.answer_judge` has loaded."""
    homes = [(face, home, names.split()) for face, by_home in HOMES.items()
             for home, names in by_home.items()]
    script = f"""
import importlib, types
homes = {homes!r}
objects = [(face, home, n, getattr(importlib.import_module(home), n))
           for face, home, names in homes for n in names]
wrong = [f"{{face}}.{{n}} is not {{home}}.{{n}}" for face, home, n, obj in objects
         if getattr(importlib.import_module(face), n) is not obj]
from ragkit import judge
import ragkit, ragkit.agent, ragkit.evaluate
if judge is not ragkit.evaluate.judge or ragkit.judge is not judge:
    wrong.append("ragkit.judge is not ragkit.evaluate.judge")
for name in ("compare", "crag", "long_context", "self_rag"):
    if getattr(ragkit.agent, name) is not importlib.import_module("ragkit.agent." + name):
        wrong.append("ragkit.agent." + name + " is not the module")
print(wrong)
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "[]"


def test_importing_the_llm_judge_module_keeps_ragkit_judge_the_function():
    importlib.import_module("ragkit.answer_judge")
    from ragkit import judge
    assert judge is ragkit.evaluate.judge
    assert ragkit.judge is ragkit.evaluate.judge
    assert importlib.import_module("ragkit.answer_judge").Judge is ragkit.Judge


def _loaded_after(statement: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", f"import sys\n{statement}\nprint(*sys.modules)"],
                         capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    return set(out.stdout.split())


def test_import_ragkit_loads_no_heavy_module_it_did_not_load_before():
    assert not set(HEAVY) & _loaded_after("import ragkit")


def test_the_agent_and_answering_faces_load_their_parts_on_first_use():
    """Importing a light agent module (which imports the `ragkit.agent` package first) does
    not load the loop or the Anthropic SDK; nor does `diagnose` from the answering face."""
    assert not {"anthropic", "ragkit.agent.loop"} & _loaded_after("import ragkit.agent.tool")
    assert "anthropic" not in _loaded_after("from ragkit.answering import diagnose, sweep")


def test_no_export_is_named_like_a_submodule_of_its_face():
    """A package attribute named like its submodule is replaced by the module when the
    submodule loads; so no export of `ragkit` is (the agent face exports its four method
    modules whole, as themselves)."""
    submodules = {m.name for m in pkgutil.iter_modules(ragkit.__path__)}
    assert set(ragkit.__all__) & submodules == set()
    agent = {m.name for m in pkgutil.iter_modules(ragkit.agent.__path__)}
    assert set(ragkit.agent.__all__) & agent == AGENT_MODULES


def test_no_agent_module_imports_a_name_from_the_agent_face():
    """`from ragkit.agent import X` inside the package is a submodule import only, so no part
    of the agent waits on the face (which would be an import circle)."""
    folder = ROOT / "ragkit" / "agent"
    submodules = {p.stem for p in folder.glob("*.py")} | {p.name for p in folder.iterdir()
                                                           if (p / "__init__.py").exists()}
    wrong = []
    for path in folder.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (
                    node.module == "ragkit.agent" or (node.level == 1 and not node.module)):
                wrong += [f"{path.name}: {a.name}" for a in node.names
                          if a.name not in submodules]
    assert not wrong
