"""`--api-timeout` and `--api-retries`: the time and retry budget of the Anthropic and Voyage
clients, on every subcommand that may call them.

The options set RAGKIT_API_TIMEOUT / RAGKIT_API_RETRIES for this process (and the notebooks
or workers it starts), which `ragkit.online.budget()` reads whenever a client is made; left
out, the environment's values or the defaults apply (connect 10 s, read 120 s, 2 retries).
"""
from __future__ import annotations

import argparse
import os

from ragkit.online import (CONNECT_TIMEOUT, ENV_CONNECT, ENV_RETRIES, ENV_TIMEOUT,
                           READ_TIMEOUT, RETRIES)

# subcommands that may call a paid API: a Claude contextualizer, answerer, judge or reranker,
# or a Voyage embedder or reranker
COMMANDS = ("index", "search", "eval", "tune", "ask", "tool")


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a number of seconds > 0, got '{text}'")
    return value


def _retries(text: str) -> int:
    if not (text.isascii() and text.isdigit()):  # "²".isdigit(), but int("²") raises
        raise argparse.ArgumentTypeError(f"expected a whole number ≥ 0, got '{text}'")
    return int(text)


def add_api_options(parser: argparse.ArgumentParser) -> None:
    """The two options, in a group of their own at the end of the subcommand's --help."""
    group = parser.add_argument_group(
        "API calls (Anthropic, Voyage)",
        f"A server that accepts the connection and never answers is given up after about "
        f"(retries + 1) × timeout plus a few seconds of back-off: by default 3 × "
        f"{READ_TIMEOUT:g} s. Connecting waits ${ENV_CONNECT} or {CONNECT_TIMEOUT:g} s.")
    group.add_argument("--api-timeout", type=_seconds, metavar="SECONDS",
                       help=f"seconds to wait for each reply before giving up on that attempt "
                            f"(default: ${ENV_TIMEOUT} or {READ_TIMEOUT:g})")
    group.add_argument("--api-retries", type=_retries, metavar="N",
                       help=f"attempts after the first, on a timeout, 429 or 5xx (default: "
                            f"${ENV_RETRIES} or {RETRIES})")


def apply_api_options(args: argparse.Namespace) -> None:
    """Put the options given into the environment, where every client reads them."""
    if getattr(args, "api_timeout", None) is not None:
        os.environ[ENV_TIMEOUT] = repr(args.api_timeout)
    if getattr(args, "api_retries", None) is not None:
        os.environ[ENV_RETRIES] = str(args.api_retries)
