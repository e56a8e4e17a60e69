"""The report headline's ladder: which notebooks' recorded ladders it shows, and what it says.

What it is: `ladders(document)`, every recorded `ladder_*` table with Fail@20 and reduction
%, labelled by the notebook and the data it was measured on (the public cookbook set first);
`ladder_rows`, the headline table's rows beside the article's; `overstatement`, why the
shipped data's column overstates the article's effect; and `few_failures_notes`, where a
ladder's first rung fails too few questions for its reduction to read as a rate. What it is
not: the page (`ragkit.report`).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from ragkit.ladder import FAILED
from ragkit.notebook_data import SHIPPED, data_label
from ragkit.report_tables import cell_text
from ragkit.sample_collection import SAMPLE_LABEL, folder_label
from ragkit.text_stats import counted, fewer_failures, too_few_failures

LADDER = ("Fail@20", "reduction %")
CONTEXT_RUNG = "+ contextual BM25 (hybrid)"  # the article's contextual embeddings + BM25


def _data_of(nb: dict, short: str) -> str:
    """The folder the ladder `short` of notebook `nb` was measured on, as its captions name
    it: "shipped" or `data_dir`'s name (`data_label`); notebook 08's `docs_dir`, the sample as
    what it is or the folder's name (`folder_label`; the headline said "your folder").
    A relative folder is relative to the notebooks' folder, where they run."""
    key, default, name = _FOLDERS[short]
    folder = (nb.get("parameters") or {}).get(key)
    if folder is None:
        return default
    path = Path(folder)
    return name(path if path.is_absolute() else SHIPPED.parent / "notebooks" / path)


_FOLDERS = {"shipped": ("data_dir", "shipped", data_label),  # ladder name -> its parameter
            "your folder": ("docs_dir", SAMPLE_LABEL, folder_label)}


def ladders(document: dict) -> list[tuple[str, dict]]:
    """(label, table) of every recorded `ladder_*` table with Fail@20 and reduction %, the
    public cookbook set's first: its code is the closer test of the article's effect. The
    `ladder_shipped` table of a run on other data is labelled with that data's folder name,
    so the headline neither calls it shipped nor explains it by the shipped data; notebook
    08's `ladder_your_folder` with the folder it read."""
    found = []
    for nb in document["notebooks"]:
        for name, table in nb["tables"].items():
            if name.startswith("ladder") and all(c in table["columns"] for c in LADDER):
                short = name.removeprefix("ladder").strip("_").replace("_", " ") or "ladder"
                short = _data_of(nb, short) if short in _FOLDERS else short
                found.append((f"{nb['name'][:2]} · {short}", table))
    return sorted(found, key=lambda pair: "cookbook" not in pair[0])  # stable otherwise


def _reduction(table: dict, prefix: str = "") -> float | None:
    if CONTEXT_RUNG not in table["index"] or prefix + "reduction %" not in table["columns"]:
        return None
    row = table["data"][table["index"].index(CONTEXT_RUNG)]
    return row[table["columns"].index(prefix + "reduction %")]


def overstatement(document: dict) -> str:
    """Why the shipped data's column overstates the article's effect, with its numbers (""
    without a shipped ladder, or without the article's numbers beside it)."""
    found = dict(ladders(document))
    shipped = next((t for label, t in found.items() if label.endswith("shipped")), None)
    mine = _reduction(shipped) if shipped else None
    article = _reduction(shipped, "article ") if shipped else None
    if mine is None or article is None:
        return ""
    public = next((_reduction(t) for label, t in found.items() if label.endswith("cookbook")),
                  None)
    closer = (f"; on the public cookbook set the same rung gives {public:.0f} %"
              if public is not None else "")
    return (f"The shipped data's column overstates the article's effect: its answers' company, "
            f"quarter and product names sit in titles and front matter, so any context "
            f"recovers them — {fewer_failures(mine)} at “{CONTEXT_RUNG}” against the "
            f"article's {article:.0f} %{closer}.")


def ladder_rows(document: dict) -> tuple[list[str], list[str], list[list[Any]]]:
    """The headline ladder: group labels, rung names, and per rung the Fail@20 and reduction
    of each ladder, then the article's (from the first ladder that has them). A ladder that
    counts its failed questions (`ragkit.ladder.FAILED`) shows the count beside Fail@20,
    "7.1 (3 questions failed)": a reduction of -200 % from 1 failed question to 3 says little
    alone."""
    found = ladders(document)
    rungs = list(dict.fromkeys(r for _, t in found for r in t["index"]))
    article = next((t for _, t in found if "article Fail@20" in t["columns"]), None)
    sources = [(t, "") for _, t in found] + ([(article, "article ")] if article else [])
    rows = []
    for rung in rungs:
        row = []
        for table, prefix in sources:
            at = table["index"].index(rung) if rung in table["index"] else None
            values = dict(zip(table["columns"], table["data"][at])) if at is not None else {}
            fail, failed = values.get(prefix + LADDER[0]), values.get(prefix + FAILED)
            if fail is not None and failed is not None:
                fail = f"{cell_text(fail, '.1f')} ({counted(failed, 'question')} failed)"
            row += [fail, values.get(prefix + LADDER[1])]
        rows.append(row)
    groups = [label for label, _ in found] + (["Anthropic's article"] if article else [])
    return groups, rungs, rows


def few_failures_notes(document: dict) -> list[str]:
    """A sentence for each ladder whose first rung fails too few questions for its reduction
    to read as a rate (`ragkit.text_stats.too_few_failures`); none without counts."""
    firsts = [(group, t["data"][0][t["columns"].index(FAILED)]) for group, t in ladders(document)
              if FAILED in t["columns"] and t["data"]]
    return [f"{group}: {too_few_failures(n)}; read its failed questions, not its reduction."
            for group, n in firsts if n is not None and too_few_failures(n)]
