"""The shape every retriever, fuser and run file in ragkit shares: a ranking.

A `Ranking` is a list of (id, score) pairs, best first; ranks start at 1. This leaf holds
only the type, so that foundations (`ragkit.runs` reads and writes rankings as TREC runs)
and steps (`ragkit.fusion`, the stores, the rerankers) can all name it without importing
each other. The order a ranking is sorted in — ragkit's tie rule — is `ragkit.fusion.ranked`.
"""
from __future__ import annotations

Ranking = list[tuple[str, float]]
