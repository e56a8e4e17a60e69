"""A tiny data set in the shipped layout, written for a test (for
`tests/test_notebooks_any_data.py`): 12 documents of a made-up note-taking app in three
top-level folders (`guides/`, `faq/`, `code/`), one of them long enough for several chunks, 15
golden questions, every one in the dev split, no Korean question and no `replay/` folder — the things the shipped data has and a
user's data may not. Written as a `corpus/` folder or, the same documents, as `documents.jsonl`."""
from __future__ import annotations

import json
from pathlib import Path

DOCUMENTS = {
    "guides/sync.md": ("Syncing notes", [
        "Quillmate keeps every notebook on the server and on each device.",
        "Background sync runs every 15 minutes while the app is open.",
        "A conflict keeps both versions and marks the older one with a yellow badge."]),
    "guides/export.md": ("Exporting notes", [
        "A notebook can be exported from the File menu.",
        "Exports are written as Markdown files inside a single zip archive.",
        "Attachments larger than 50 MB are left out of the archive and listed in skipped.txt."]),
    "guides/sharing.md": ("Sharing notebooks", [
        "A shared notebook has an owner and up to 12 editors.",
        "Viewers see changes after the next sync but cannot edit.",
        "The owner can revoke a link at any time from the Share dialog."]),
    "guides/offline.md": ("Working offline", [
        "Without a connection Quillmate stores edits in a local journal.",
        *[f"## Editor setting {n}\n\nSetting {n} changes how the editor draws panel {n} and "
          f"which shortcut opens it; the default for setting {n} suits most people."
          for n in range(1, 31)],
        "## The journal",
        "The journal holds at most 5,000 edits before the app asks you to reconnect.",
        "Edits in the journal are replayed in order when the device is online again."]),
    "faq/billing.md": ("Billing questions", [
        "The Plus plan costs 4 euros per month, billed yearly.",
        "A refund is possible within 14 days of the first payment.",
        "Invoices are sent to the account's billing address on the first of the month."]),
    "faq/accounts.md": ("Account questions", [
        "An account needs a verified email address.",
        "Two-factor sign-in uses a time-based code from an authenticator app.",
        "A deleted account can be restored by support for 30 days."]),
    "faq/privacy.md": ("Privacy questions", [
        "Notes are encrypted at rest with AES-256.",
        "Quillmate never reads the content of private notebooks for advertising.",
        "Server logs are kept for 90 days and then erased."]),
    "faq/limits.md": ("Plan limits", [
        "The free plan allows 3 notebooks and 200 MB of attachments.",
        "The Plus plan removes the notebook limit and allows 10 GB of attachments.",
        "A single note can hold at most one million characters."]),
    "code/quill/sync.py": ("", [
        "SYNC_INTERVAL_SECONDS = 900",
        "def schedule_sync(app):\n    \"\"\"Start the background sync timer for the open app.\"\"\"\n"
        "    app.timer(SYNC_INTERVAL_SECONDS, app.sync)"]),
    "code/quill/export.py": ("", [
        "MAX_ATTACHMENT_BYTES = 50 * 1024 * 1024",
        "def export_notebook(notebook, archive):\n    \"\"\"Write each note as Markdown into "
        "the zip archive.\"\"\"\n    for note in notebook.notes:\n"
        "        archive.writestr(note.slug + '.md', note.markdown)"]),
    "code/quill/billing.py": ("", [
        "REFUND_WINDOW_DAYS = 14",
        "def refund_allowed(payment, today):\n    \"\"\"True within the refund window of the "
        "first payment.\"\"\"\n    return (today - payment.date).days <= REFUND_WINDOW_DAYS"]),
    "code/quill/limits.py": ("", [
        "FREE_NOTEBOOKS = 3",
        "def can_create_notebook(account):\n    \"\"\"Free accounts may hold three notebooks."
        "\"\"\"\n    return account.plan != 'free' or len(account.notebooks) < FREE_NOTEBOOKS"]),
}

# (kind, question, answer, [(document, span)])
QUESTIONS = [
    ("lexical", "How often does background sync run?", "Every 15 minutes.",
     [("guides/sync.md", "Background sync runs every 15 minutes while the app is open.")]),
    ("paraphrase", "What happens when two devices change the same note?",
     "Both versions are kept; the older one gets a yellow badge.",
     [("guides/sync.md", "A conflict keeps both versions and marks the older one")]),
    ("lexical", "In what format are exported notes written?", "Markdown files in a zip archive.",
     [("guides/export.md", "Exports are written as Markdown files inside a single zip archive.")]),
    ("contextual", "Which attachments are left out of an export?", "Those larger than 50 MB.",
     [("guides/export.md", "Attachments larger than 50 MB are left out of the archive")]),
    ("lexical", "How many editors can a shared notebook have?", "Up to 12.",
     [("guides/sharing.md", "A shared notebook has an owner and up to 12 editors.")]),
    ("paraphrase", "How many changes can I make without internet before the app complains?",
     "5,000 edits.", [("guides/offline.md", "The journal holds at most 5,000 edits")]),
    ("lexical", "How much does the Plus plan cost?", "4 euros per month, billed yearly.",
     [("faq/billing.md", "The Plus plan costs 4 euros per month, billed yearly.")]),
    ("paraphrase", "Can I get my money back after paying?", "Within 14 days of the first payment.",
     [("faq/billing.md", "A refund is possible within 14 days of the first payment.")]),
    ("contextual", "How long can support bring back a deleted account?", "30 days.",
     [("faq/accounts.md", "A deleted account can be restored by support for 30 days.")]),
    ("lexical", "How are notes encrypted at rest?", "With AES-256.",
     [("faq/privacy.md", "Notes are encrypted at rest with AES-256.")]),
    ("lexical", "How long are server logs kept?", "90 days.",
     [("faq/privacy.md", "Server logs are kept for 90 days and then erased.")]),
    ("multi-hop", "How much attachment space do the free and the Plus plan allow?",
     "200 MB on the free plan, 10 GB on Plus.",
     [("faq/limits.md", "The free plan allows 3 notebooks and 200 MB of attachments."),
      ("faq/limits.md", "The Plus plan removes the notebook limit and allows 10 GB of attachments.")]),
    ("code", "Which constant sets the sync interval?", "SYNC_INTERVAL_SECONDS = 900.",
     [("code/quill/sync.py", "SYNC_INTERVAL_SECONDS = 900")]),
    ("code", "Which function decides whether a refund is allowed?", "refund_allowed in billing.py.",
     [("code/quill/billing.py", "def refund_allowed(payment, today):")]),
    ("unanswerable", "Which phone models does Quillmate support?", "", []),
]


def _body(path: str, title: str, parts: list[str]) -> str:
    if path.endswith(".py"):
        return "\n\n\n".join(parts) + "\n"
    return f"# {title}\n\n" + "\n\n".join(parts) + "\n"


def _text(path: str, title: str, parts: list[str]) -> str:
    return _body(path, title, parts) if path.endswith(".py") else (
        f"---\ntitle: {title}\n---\n" + _body(path, title, parts))


def write_tiny_dataset(root: Path, split: str = "dev", jsonl: bool = False) -> Path:
    """Write the data set into `root` (corpus/, or with `jsonl` documents.jsonl with the same
    ids and texts, and golden/questions.jsonl); return `root`."""
    root.mkdir(parents=True, exist_ok=True)
    if jsonl:
        (root / "documents.jsonl").write_text("".join(
            json.dumps({"id": path, "title": title or path, "text": _body(path, title, parts)})
            + "\n"
            for path, (title, parts) in DOCUMENTS.items()), encoding="utf-8")
    for path, (title, parts) in DOCUMENTS.items() if not jsonl else ():
        target = root / "corpus" / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(_text(path, title, parts), encoding="utf-8")
    (root / "golden").mkdir(parents=True, exist_ok=True)
    rows = [{"id": f"tiny-{n:03d}", "question": question, "kind": kind, "split": split,
             "lang": "en", "answer": answer,
             "golden": [{"doc_id": doc, "span": span} for doc, span in golden]}
            for n, (kind, question, answer, golden) in enumerate(QUESTIONS, start=1)]
    (root / "golden" / "questions.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return root
