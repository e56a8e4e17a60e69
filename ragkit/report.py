"""The cookbook report: what each notebook recorded, as `report.html` and `summary.md`.

What it is: `write_report(results, folder)` turns the results of `ragkit.cookbook.execute`
(notebook name, error, seconds, records, executed notebook) into one HTML page — status,
every recorded table, every figure — and a plain Markdown summary of the same tables.
Numbers keep three significant digits.

What it is not: a notebook renderer (no prose, no code cells) nor a writer that checks where
it writes: the caller hands it a folder it owns (`ragkit.atomic.replace_folder`).
"""
from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

import pandas as pd

from ragkit.atomic import write_text

STYLE = ("body{font-family:sans-serif;max-width:60em;margin:auto}"
         "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px}"
         ".failed{color:#b00}")


def _as_frame(value: Any) -> pd.DataFrame | None:
    if isinstance(value, dict) and "table" in value:
        t = value["table"]
        return pd.DataFrame(t["data"], index=t["index"], columns=t["columns"])
    return None


def _figures(output: Path) -> list[str]:
    """The base64 PNGs in an executed notebook (none when it did not get written)."""
    nb = json.loads(output.read_text()) if output.is_file() else {"cells": []}
    return [o["data"]["image/png"] for c in nb["cells"] for o in c.get("outputs", [])
            if "image/png" in o.get("data", {})]


def _tables(records: dict[str, Any]) -> dict[str, pd.DataFrame]:
    """Recorded tables by name; every other recorded value gathered into one `values` table."""
    tables = {name: frame for name, value in records.items()
              if (frame := _as_frame(value)) is not None}
    others = {name: value for name, value in records.items() if name not in tables}
    if others:
        tables["values"] = pd.DataFrame({"value": pd.Series(others, dtype=object)})
    return tables


def status(result: dict) -> str:
    """`ok`, or `failed: ` and the failing cell's error."""
    return f"failed: {result['error']}" if result["error"] else "ok"


def write_report(results: list[dict], folder: Path) -> Path:
    """`report.html` with every recorded table and figure; `summary.md` in plain text."""
    parts = ["<html><head><meta charset='utf-8'><title>ragkit cookbook report</title>"
             f"<style>{STYLE}</style></head><body><h1>ragkit cookbook report</h1>"]
    lines = ["# ragkit cookbook summary", "", "| notebook | status | seconds |", "|---|---|---|"]
    sections = []
    for res in results:
        state = status(res)
        cls = " class='failed'" if res["error"] else ""
        lines.append(f"| {res['notebook']} | {state.replace('|', chr(92) + '|')} "
                     f"| {res['seconds']:.0f} |")
        parts.append(f"<h2>{html.escape(res['notebook'])}</h2><p{cls}>{html.escape(state)}</p>")
        for name, frame in _tables(res["records"]).items():
            table = frame.to_html(float_format=lambda v: f"{v:.3g}")
            parts.append(f"<h3>{html.escape(name)}</h3>{table}")
            sections += ["", f"## {res['notebook']}: {name}", "", frame.to_markdown(floatfmt=".3g")]
        for png in _figures(res["output"]):
            parts.append(f"<img src='data:image/png;base64,{png}' style='max-width:100%'>")
    write_text(folder / "report.html", "".join(parts) + "</body></html>")
    write_text(folder / "summary.md", "\n".join(lines + sections) + "\n")
    return folder / "report.html"
