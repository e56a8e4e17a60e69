"""The cookbook report: `results.json` rendered as `report.html` and `summary.md`.

What it is: `write_report(document, folder)` renders the document `ragkit.results` builds.
`report.html` is one self-contained page (styles inline, figures embedded as PNG): first a
headline — the contextual-retrieval ladder from every notebook that records a `ladder_*` table
(Fail@20 and its relative reduction, beside the article's; `ragkit.report_ladders`) and each
notebook's one-line finding — then one section per notebook with its title, what it teaches, its parameters,
its recorded tables (`ragkit.report_tables`: captioned, numbers rounded by what they
measure, money with 3 significant digits, two-level headers stacked), its figures with their
captions, its time and a link to the executed notebook; a failed notebook shows the failing
cell's source and traceback. `summary.md` is the headline for terminals.

What it is not: a notebook renderer (no prose, no code cells) nor a writer that checks where
it writes: the caller hands it a folder it owns (`ragkit.atomic.replace_folder`).
"""
from __future__ import annotations

import html
import re
from pathlib import Path
from urllib.parse import quote

from ragkit.atomic import write_text
from ragkit.loaders.folder import escaped
from ragkit.money import DOLLAR
from ragkit.report_ladders import (LADDER, few_failures_notes, ladder_rows, ladders,
                                   overstatement)
from ragkit.report_tables import cell_text, number_format, table_html
from ragkit.text_stats import counted

__all__ = ["cell_text", "number_format", "summary_md", "table_html", "write_report"]

STYLE = Path(__file__).with_name("report.css")  # the page's styles, inlined in it


def _markdown(text: str) -> str:
    """Inline Markdown (bold, italics, code, links) as HTML; raw HTML escaped, `DOLLAR` a $."""
    import mistune
    rendered = mistune.create_markdown(escape=True)(text.replace(DOLLAR, "$")).strip()
    return re.sub(r"^<p>(.*)</p>$", r"\1", rendered, flags=re.S)


def duration(seconds: float) -> str:
    """`42 s`, `3 min 05 s`."""
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest:02d} s" if minutes else f"{seconds:.0f} s"


def headline_html(document: dict) -> str:
    groups, rungs, rows = ladder_rows(document)
    notebooks = document["notebooks"]
    failed = [nb for nb in notebooks if nb["status"] == "failed"]
    ran = "the notebook ran" if len(notebooks) == 1 else f"all {len(notebooks)} notebooks ran"
    state = (f"<span class='ok'>{ran}</span>" if not failed else
             f"<span class='failed'>{len(failed)} of {counted(len(notebooks), 'notebook')} "
             f"failed: "
             f"{html.escape(', '.join(nb['name'] for nb in failed))}</span>")
    parts = ["<section id='headline'><h2>Headline</h2>", f"<p>{state}.</p>"]
    if rungs:
        legend = "; ".join(f"<b>{html.escape(label)}</b>: {html.escape(t['caption'])}"
                           for label, t in ladders(document) if t["caption"])
        top = "".join(f"<th colspan='2' class='num'>{html.escape(g)}</th>" for g in groups)
        sub = "".join("<th class='num'>Fail@20</th><th class='num'>reduction</th>"
                      for _ in groups)
        body = "".join(
            f"<tr><th>{html.escape(rung)}</th>" + "".join(
                f"<td class='num'>{cell_text(v, '.1f')}{'' if v is None or i % 2 == 0 else ' %'}"
                "</td>" for i, v in enumerate(row)) + "</tr>" for rung, row in zip(rungs, rows))
        parts.append(
            "<figure><figcaption><b>The contextual-retrieval ladder.</b> Failure rate "
            "Fail@20 = 100 − Pass@20 per rung (in brackets the questions it fails, where a "
            "notebook counts them), and its reduction relative to the first rung, in every "
            "notebook that records a ladder, beside the article's numbers; – marks a rung not "
            f"built. {legend}</figcaption><div class='scroll'><table><thead>"
            f"<tr><th rowspan='2'>rung</th>{top}</tr><tr>{sub}</tr></thead>"
            f"<tbody>{body}</tbody></table></div></figure>")
        for note in [overstatement(document), *few_failures_notes(document)]:
            if note:
                parts.append(f"<p>{html.escape(note)}</p>")

    def found(nb: dict) -> str:
        if nb["error"]:
            return f"<span class='failed'>failed at {html.escape(nb['error']['line'])}</span>"
        return _markdown(nb["finding"]) if nb["finding"] else "–"
    findings = "".join(
        f"<tr><td><a href='#nb-{_number(nb)}'>{html.escape(nb['title'])}</a></td>"
        f"<td>{found(nb)}</td>"
        f"<td class='{nb['status']}'>{nb['status']}</td>"
        f"<td class='num'>{duration(nb['seconds'])}</td></tr>" for nb in notebooks)
    parts.append("<h3>What each notebook found</h3><div class='scroll'><table><thead><tr>"
                 "<th>notebook</th><th>finding</th><th>status</th><th class='num'>time</th>"
                 f"</tr></thead><tbody>{findings}</tbody></table></div></section>")
    return "".join(parts)


def _number(nb: dict) -> str:
    """A notebook's number (its name's first two characters), as HTML."""
    return html.escape(nb["name"][:2])


def _pngs(executed: Path) -> dict[int, list[str]]:
    """Base64 PNGs of an executed notebook by cell index (none when it was not written)."""
    import nbformat
    if not executed.is_file():
        return {}
    cells = nbformat.read(executed, as_version=4).cells
    return {i: [o["data"]["image/png"] for o in c.get("outputs", [])
                if "image/png" in o.get("data", {})] for i, c in enumerate(cells)}


def notebook_html(nb: dict, folder: Path) -> str:
    number = _number(nb)
    link = html.escape(quote(nb["executed"]))  # a file beside the report, never a javascript: URL
    parts = [f"<section id='nb-{number}'><h2>{html.escape(nb['title'])}</h2>",
             f"<p class='meta'><span class='{nb['status']}'>{nb['status']}</span> · "
             f"{duration(nb['seconds'])} · <a href='{link}'>executed notebook</a></p>"]
    if nb["error"]:
        err = nb["error"]
        parts.append(f"<div class='error'><p class='failed'>failed at {html.escape(err['line'])}"
                     f"</p><p>The failing cell:</p><pre>{html.escape(err['source'])}</pre>"
                     f"<pre>{html.escape(err.get('traceback') or err['evalue'])}</pre></div>")
    if nb["finding"]:
        parts.append(f"<div class='finding'><b>Finding:</b> {_markdown(nb['finding'])}</div>")
    if nb["learn"]:
        items = "".join(f"<li>{_markdown(item)}</li>" for item in nb["learn"])
        parts.append(f"<h3>What you will learn</h3><ul>{items}</ul>")
    rows = "".join(f"<tr><th><code>{html.escape(k)}</code></th><td><code>{html.escape(repr(v))}"
                   f"</code></td><td>{'set for this run' if k in nb['overridden'] else 'default'}"
                   "</td></tr>" for k, v in nb["parameters"].items())
    if rows:
        parts.append(f"<h3>Parameters</h3><table><tbody>{rows}</tbody></table>")
    if nb["tables"]:
        parts.append("<h3>Tables</h3>")
        parts += [table_html(t, f"Table {number}.{i}")
                  for i, t in enumerate(nb["tables"].values(), start=1)]
    pngs = _pngs(folder / nb["executed"])
    if nb["figures"]:
        parts.append("<h3>Figures</h3>")
    for i, fig in enumerate(nb["figures"], start=1):
        for png in pngs.get(fig["cell"], []):
            parts.append(f"<figure><img alt='{html.escape(fig['caption'])}' "
                         f"src='data:image/png;base64,{png.strip()}'><figcaption><b>Figure "
                         f"{number}.{i}.</b> {html.escape(fig['caption'])}</figcaption></figure>")
    return "".join(parts) + "</section>"


def run_line(run: dict) -> str:
    """`2026-12-01 09:40 UTC · ragkit 0.1.0 · commit 1a2b3c4 · Python 3.11.7 · ...`"""
    commit = run["git"]["commit"]
    git = (f"commit {commit[:10]}{' (with local changes)' if run['git']['dirty'] else ''}"
           if commit else "no git commit")
    backends = ", ".join(f"{k} {v}" for k, v in run["backends"].items())
    return (f"{run['started'].replace('T', ' ').replace('+00:00', ' UTC')} · ragkit "
            f"{run['ragkit']} · {git} · Python {run['python']} · {run['cpu_count']} cores · "
            f"{backends} · {duration(run['seconds'])} in all"
            + (f", {run['jobs']} notebooks at a time" if run.get("jobs", 1) > 1 else ""))


def environment_html(run: dict) -> str:
    data = "".join(f"<tr><th>{html.escape(k)}</th><td><code>{v['sha256'][:16]}</code></td>"
                   f"<td class='num'>{v['files']:,}</td><td class='num'>{v['bytes']:,}</td></tr>"
                   for k, v in run["datasets"].items())
    packages = ", ".join(f"{k} {v or 'not installed'}" for k, v in run["packages"].items())
    return ("<section id='environment'><h2>Environment</h2>"
            f"<p class='meta'>{html.escape(run['platform'])}</p>"
            "<h3>Data sets</h3><table><thead><tr><th>folder</th><th>sha256</th>"
            f"<th class='num'>files</th><th class='num'>bytes</th></tr></thead><tbody>{data}"
            f"</tbody></table><h3>Packages</h3><p class='meta'>{html.escape(packages)}</p>"
            "</section>")


def summary_md(document: dict) -> str:
    """The headline as Markdown: run line, notebooks with status and finding, the ladder."""
    def esc(text: str) -> str:  # a folder name in a finding may hold an escape sequence
        return escaped(text).replace("|", "\\|")
    lines = ["# ragkit cookbook summary", "", run_line(document["run"]), "",
             "| notebook | status | seconds | finding |", "|---|---|---:|---|"]
    for nb in document["notebooks"]:
        state = f"failed: {nb['error']['line']}" if nb["error"] else "ok"
        lines.append(f"| {esc(nb['name'])} | {esc(state)} | {nb['seconds']:.0f} "
                     f"| {esc(nb['finding'] or '–')} |")
    groups, rungs, rows = ladder_rows(document)
    if rungs:
        header = [f"{g}: {c}" for g in groups for c in LADDER]
        lines += ["", "## The contextual-retrieval ladder (Fail@20, reduction %)", "",
                  "| rung | " + " | ".join(map(esc, header)) + " |",
                  "|---|" + "---:|" * len(header)]
        lines += [f"| {esc(rung)} | " + " | ".join(cell_text(v, ".1f") for v in row) + " |"
                  for rung, row in zip(rungs, rows)]
        for note in [overstatement(document), *few_failures_notes(document)]:
            lines += ["", esc(note)] if note else []
    return "\n".join(lines) + "\n"


def write_report(document: dict, folder: Path) -> Path:
    """`report.html` (headline, a section per notebook, environment) and `summary.md`."""
    nav = "".join(f"<a href='#nb-{_number(nb)}'>{_number(nb)}</a>"
                  for nb in document["notebooks"])
    page = ["<!doctype html><html lang='en'><head><meta charset='utf-8'>",
            "<meta name='viewport' content='width=device-width, initial-scale=1'>",
            "<title>ragkit cookbook report</title>",
            f"<style>\n{STYLE.read_text(encoding='utf-8')}</style></head><body>",
            "<header><h1>ragkit cookbook report</h1>",
            f"<p class='meta'>{html.escape(run_line(document['run']))}</p>",
            f"<nav class='meta'><a href='#headline'>headline</a>{nav}"
            "<a href='#environment'>environment</a></nav></header>",
            headline_html(document),
            *[notebook_html(nb, folder) for nb in document["notebooks"]],
            environment_html(document["run"]), "</body></html>\n"]
    write_text(folder / "report.html", "".join(page))
    write_text(folder / "summary.md", summary_md(document))
    return folder / "report.html"
