"""What several `ragkit` subcommands share: option groups, the index config they make, the
index loader, and small printers. Each subcommand lives in a module of its own (`retrieval`,
`answers`, `manage`)."""
from __future__ import annotations

import argparse
import json
import re
import sys
import warnings
from contextlib import nullcontext
from pathlib import Path

from ragkit import config  # MODES and FUSIONS: the one list of each, read as parsers are built
from ragkit.batch_journal import batching
from ragkit.contextualize.prompts import DEFAULT_MODEL, load_prompt
from ragkit.cli.argtypes import nonempty_path, positive_int  # noqa: F401 (read from here too)
from ragkit.cli.fusion import add_fusion_options
from ragkit.documents import RagkitError, RagkitWarning
from ragkit.index_owner import manifest_of
from ragkit.loaders.folder import escaped
from ragkit.text_stats import counted


_UNSHOWN = re.compile("[\x7f-\x9f\u202a-\u202e\u2066-\u2069]")  # left raw by json.dumps
DEFAULT_RERANK = config.DEFAULT_RERANK  # a hybrid search's reranker unless told otherwise


class Help(argparse.ArgumentDefaultsHelpFormatter):
    """Show every option's default, except where there is none to show (None, off, empty)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if "(default:" in text or action.default in (None, False, "", argparse.SUPPRESS):
            return text
        return super()._get_help_string(action)


def terminal_text(text: str) -> str:
    """`text` with each control character but tab and newline written as its escape (`\\x1b`):
    document text, ids and titles from a JSONL file are not cleaned as a folder's files are
    (`ragkit.document_folder`), and a terminal would obey an escape sequence in them."""
    return escaped(text, keep="\n\t")


def said(text: str, most: int = 10_000) -> str:
    """An error's or warning's text as its one line prints it: escaped (`terminal_text`), and
    at most about `most` characters, its start and end kept (the file and the advice): a
    50 MB document id in a run file made a 50 MB error "line". Room for a path of the
    longest the system opens (4,096 bytes) and its reason."""
    text = terminal_text(text)
    if len(text) <= most:
        return text
    tail = most // 5
    return (f"{text[:most - tail]} … ({len(text) - most:,} characters left out) … "
            f"{text[-tail:]}")


def terminal_json(value: object) -> str:
    """`value` as indented JSON, non-ASCII text kept (Korean stays readable), with DEL, the C1
    control characters and the bidirectional overrides written as `\\u` escapes: `json.dumps`
    escapes only the C0 ones, so a file's U+202E turned the rest of a printed line around. The
    escapes are JSON's own, so the output still reads back as the same value."""
    text = json.dumps(value, indent=2, ensure_ascii=False)
    return _UNSHOWN.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def clamp_k(k: int, available: int, unit: str = "chunk") -> int:
    """k, or `available` when the index holds fewer, with one warning line saying so.

    A k past the index is no error (the default 20 on a small index must work): the index
    returns all it has, as `Pipeline.search` does. k <= 0 is refused earlier (`positive_int`,
    `Pipeline.search`), not here.
    """
    if 0 < available < k:
        warnings.warn(f"k={k} is larger than the index ({counted(available, unit)}); "
                      f"returning {available}", RagkitWarning, stacklevel=2)
        return available
    return k


class Given(argparse.Action):
    """Stores the value and notes the option as given on the command line
    (`namespace.given`): `index --update` must tell "--chunk-size 512" from no --chunk-size."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        setattr(namespace, self.dest, self.const if self.nargs == 0 else values)
        namespace.given = getattr(namespace, "given", frozenset()) | {self.dest}


def given(args: argparse.Namespace) -> frozenset[str]:
    """The destinations of the `Given` options written on the command line."""
    return getattr(args, "given", frozenset())


def add_index_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--chunk-size", type=int, default=512, action=Given,
                        help="tokens per chunk")
    parser.add_argument("--overlap", type=int, default=64, action=Given,
                        help="tokens shared by neighbours")
    parser.add_argument("--contextualizer", default="structural", action=Given,
                        help="none | structural | claude (offline stand-in without "
                             "ANTHROPIC_API_KEY)")
    parser.add_argument("--context-model", default=None, action=Given,
                        help="Claude model for --contextualizer claude (default "
                             "claude-haiku-4-5)")
    parser.add_argument("--context-prompt", type=nonempty_path, default=None, action=Given,
                        help="file with your chunk instruction for --contextualizer claude; "
                             "must contain {chunk_content}")
    parser.add_argument("--tokenizer", default="auto", action=Given,
                        help="BM25 tokenizer (see docs)")
    parser.add_argument("--embedder", default=config.DEFAULT_EMBEDDER, action=Given,
                        help="e5-small (offline default, multilingual-e5-small) | auto "
                             "(use-multilingual for Hangul text, else minilm) | minilm | "
                             "use-multilingual (offline, 16 languages) | voyage:MODEL, e.g. "
                             "voyage:voyage-3.5 | voyage-context:voyage-context-3 (need "
                             "VOYAGE_API_KEY) | none")
    parser.add_argument("--parents", action=Given, nargs=0, const=True, default=False,
                        help="parent-child: index 128-token children of each chunk; answers "
                             "read the enclosing chunk")


def add_batch_options(parser: argparse.ArgumentParser) -> None:
    """`ragkit index`'s Message Batches options (`ragkit.message_batches`)."""
    parser.add_argument("--batch", action="store_true",
                        help="send --contextualizer claude's requests through Anthropic's "
                             "Message Batches API (half price, results within 24 h) and "
                             "--embedder voyage:MODEL's documents through Voyage's Batch API "
                             "(33 %% off, 12 h); a killed run resumes its batches from the "
                             "journal in RAGKIT_HOME")
    parser.add_argument("--batch-poll", type=float, default=60.0, metavar="SECONDS",
                        help="longest wait between two checks of a batch (starts at 1 s)")
    parser.add_argument("--batch-timeout", type=float, default=None, metavar="SECONDS",
                        help="stop waiting for batches after this long (they keep running; "
                             "re-run to collect them); default: wait until they end")
    parser.add_argument("--batch-retry", default="interactive",
                        choices=("interactive", "batch", "none"),
                        help="requests a batch returns errored or expired: send them "
                             "interactively (full price, now), in one more batch, or fail")


def add_search_options(parser: argparse.ArgumentParser, multiple: bool = False) -> None:
    if multiple:
        parser.add_argument("--mode", action="append", choices=config.MODES,
                            help="retrieval mode; repeat to compare (default: all)")
    else:
        parser.add_argument("--mode", default=None, choices=config.MODES,
                            help="retrieval mode (default: hybrid; bm25 for an index built "
                                 "without vectors, as `ragkit ask` reads it)")
    add_fusion_options(parser)
    parser.add_argument("--k", type=positive_int, default=20, help="results per query")
    parser.add_argument("--rerank", default=None,
                        help="reranker of the first stage's top --rerank-candidates: offline "
                             "(learned, no network), none, claude, voyage:MODEL "
                             f"(default: {DEFAULT_RERANK} for --mode hybrid, none for bm25 and "
                             f"dense" + (", as in `ragkit search`; a NAME given reranks every "
                                         "mode, its row named MODE+NAME)"
                                         if multiple else ")"))
    parser.add_argument("--rerank-candidates", type=positive_int, default=150,
                        help="first-stage candidates the reranker sees, at most (hybrid offers "
                             "the fusion of each retriever's top 100, often fewer)")


# `ragkit index` options --update compares: argparse dest -> the IndexConfig field it sets
_INDEX_FIELDS = {"chunk_size": "chunk_size", "overlap": "overlap",
                 "contextualizer": "contextualizer", "context_model": "context_model",
                 "context_prompt": "context_prompt", "tokenizer": "tokenizer",
                 "embedder": "embedder", "parents": "parent_child"}


def check_same_options(args: argparse.Namespace, built, index: Path, why: str) -> None:
    """An index option written on the command line that differs from the index's own
    (`built`, its IndexConfig) is refused, `why` saying so (`index --update` keeps the
    index's options; `eval`/`tune --index` search the index as built) — it was silently
    ignored; one left out is the index's, whatever its default. A prompt file is compared
    by its text. Rebuilding is the way to change them."""
    for dest in sorted(given(args) & _INDEX_FIELDS.keys(), key=list(_INDEX_FIELDS).index):
        own, value = getattr(built, _INDEX_FIELDS[dest]), getattr(args, dest)
        its = f"its {'none' if own is None else own}"
        if dest == "embedder" and value == "none":
            value = None
        elif dest == "context_prompt":
            value = load_prompt(value)
            its = ("the prompt it was built with" if own else "Anthropic's, which it was built "
                   "with" if built.contextualizer == "claude" else
                   f"its contextualizer {built.contextualizer}'s, which takes no prompt")
        if value != own:
            shown = "" if dest == "parents" else f" {getattr(args, dest)}"
            raise RagkitError(f"{index}: {why}, and --{dest.replace('_', '-')}{shown} differs "
                              f"from {its}; rebuild the index to change it")


def index_config(args: argparse.Namespace):
    from ragkit.index_checks import IndexConfig, check_config  # deferred: numpy (index, eval…)
    embedder = None if args.embedder == "none" else args.embedder
    model = prompt = None
    if args.contextualizer == "claude":
        # deferred: the Anthropic client loads only with --contextualizer claude
        from ragkit.llm import price
        model = args.context_model or DEFAULT_MODEL
        price(model)  # an unknown model is refused before any work
        prompt = load_prompt(args.context_prompt) if args.context_prompt else None
        claude_contexts(model)
    elif args.context_model or args.context_prompt:
        raise RagkitError("--context-model and --context-prompt need --contextualizer claude")
    config = IndexConfig(args.chunk_size, args.overlap, args.contextualizer, args.tokenizer,
                         embedder, context_model=model, context_prompt=prompt,
                         parent_child=args.parents)
    check_config(config)  # a mistyped name, before a folder is read
    return config


def batch_mode(args: argparse.Namespace):
    """The context `ragkit index` builds in: Message Batches with --batch, else nothing."""
    if not getattr(args, "batch", False):
        return nullcontext()
    contextualizer, embedder = args.contextualizer, str(args.embedder)
    built = _index_config(args.out) if getattr(args, "update", False) else None
    if built is not None:  # --update keeps the index's own options, and so does --batch
        contextualizer, embedder = built.get("contextualizer"), str(built.get("embedder"))
    if contextualizer != "claude" and not embedder.startswith("voyage"):
        raise RagkitError("--batch sends Claude's context requests or Voyage's embeddings "
                          "through their batch APIs: it needs --contextualizer claude or "
                          "--embedder voyage:MODEL / voyage-context:MODEL")
    return batching(poll=args.batch_poll, timeout=args.batch_timeout, retry=args.batch_retry)


def _index_config(folder: str) -> dict | None:
    """The config index.json of `folder` records, or None when it is not a readable index
    (`--update` then builds one from the options given)."""
    config = (manifest_of(Path(folder)) or {}).get("config")
    return config if isinstance(config, dict) else None


def claude_contexts(model: str) -> None:
    """Start this command's usage summary afresh (`print_usage` prints it after the build)
    and say on stderr who writes the contexts: `model` through the API, or the stand-in."""
    from ragkit.llm import has_api_key, run_usage  # deferred: the Anthropic SDK
    run_usage().reset()
    print(f"contextualizer claude: {model} through the Anthropic API" if has_api_key()
          else "contextualizer claude: ANTHROPIC_API_KEY is not set, so the offline "
               "stand-in answers (structural contexts, no cost)", file=sys.stderr)


def print_usage(args: object) -> None:
    """The Claude usage summary of the command, when `args` (or an index's config) names the
    claude contextualizer."""
    if getattr(args, "contextualizer", None) == "claude":
        from ragkit.llm import run_usage  # deferred: anthropic, only with --contextualizer claude
        print(run_usage().summary())


def load_index(path: Path):
    """The index saved in `path` (`ragkit.pipeline.Pipeline.load`)."""
    from ragkit.pipeline import Pipeline  # deferred: numpy, pandas, scipy
    return Pipeline.load(path)


def chosen_rerank(asked: str | None, mode: str, pipeline) -> str:
    """The reranker a search uses: the one asked for, else `DEFAULT_RERANK` for a hybrid
    search and none otherwise; an unknown name is refused before any search."""
    rerank = asked or (DEFAULT_RERANK if mode == "hybrid" else "none")
    if rerank != "none":
        pipeline.rerank_stage(rerank)
    return rerank


def print_rerank_summary(pipeline) -> None:
    """How many queries each reranker handled, and how many kept the first-stage order."""
    for stage in pipeline.rerank_stages.values():
        print(stage.summary(), file=sys.stderr if stage.fallbacks else sys.stdout)


def check_index_covers(pipeline, data, args: argparse.Namespace) -> None:
    """An index of other documents than the data set's would score zeros: refuse it. So is
    an index of older versions of them: a document edited since the build was scored by the
    old chunks against spans placed in the new text (Pass@5 100 → 0, exit 0): see
    `ragkit.update.stale_documents`."""
    from ragkit.update import stale_documents  # deferred: numpy
    indexed = {c.doc_id for c in pipeline.chunks}
    absent = [d.id for d in data.documents if d.id not in indexed]
    rebuild = f"rebuild it with `ragkit index {args.dataset} --out {args.index}`"
    if len(absent) == len(data.documents):
        raise RagkitError(f"{args.index}: index built from other data than {args.dataset} "
                          f"(none of its {len(data.documents)} documents is in the index); "
                          f"{rebuild}")
    changed = stale_documents(pipeline, data.documents, data.chunks)
    if changed:
        update = "" if data.chunks else " (`--update` re-embeds only the changed ones)"
        raise RagkitError(f"{args.index}: {len(changed)} of the {len(data.documents)} "
                          f"documents of {args.dataset} changed since the index was built "
                          f"({escaped(changed[0].id)}{', …' if len(changed) > 1 else ''}); "
                          f"{rebuild}{update}")
    if absent:
        warnings.warn(f"{args.index}: {len(absent)} of the {len(data.documents)} documents of "
                      f"{args.dataset} are not in the index", RagkitWarning, stacklevel=2)
