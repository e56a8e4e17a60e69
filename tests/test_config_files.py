"""Configuration files (YAML, TOML, JSON) in a user's folder are read as configuration: a
chunk's section is the keys or table enclosing it, a "# " line is a comment, never a Markdown
heading, and each `key: value` line is its own quotable unit, read under its keys. They were
read as prose: a YAML comment ("# Owned by the platform team") was the section of every chunk
below it, and an answer quoted "name: billing-api replicas: 4 port: 8443" as one sentence."""
from __future__ import annotations

from ragkit.assemble import blocks
from ragkit.citation_tags import cited_tag
from ragkit.chunking import ChunkerConfig, chunk_document
from ragkit.file_kinds import is_code_name
from ragkit.config_keys import is_config_name, key_path, opens_block, within
from ragkit.contextualize.structural import structural_contexts
from ragkit.documents import Document
from ragkit.extractive_units import readings, units
from tests.test_extractive import ask, here, index_and_ask  # noqa: F401  (here: a fixture)

DEPLOY = """\
# Deployment settings for the billing service
# Owned by the platform team
service:
  name: billing-api
  replicas: 4
  port: 8443
# Database connection
database:
  host: db.internal.example
  pool_size: 25
  timeout_seconds: 30
# Retry policy for outgoing webhooks
webhooks:
  max_retries: 7
  backoff: exponential
"""
PYPROJECT = """\
[project]
name = "ledgerline"
version = "2.4.1"

# Lint settings
[tool.ruff]
line-length = 100

[tool.pytest.ini_options]
testpaths = ["tests"]
timeout = 45
"""
K8S = """\
apiVersion: apps/v1
kind: Deployment
spec:
  template:
    spec:
      containers:
        - name: web
          image: nginx:1.25
          ports:
            - containerPort: 80
"""
TSCONFIG = """\
{
  "compilerOptions": {
    "target": "es2020",
    "paths": {
      "@app/*": ["src/*"]
    }
  },
  "include": [
    "src"
  ]
}
"""


def at(text: str, needle: str) -> int:
    return text.index(needle)


def test_a_config_file_is_known_by_its_suffix_and_read_as_code_is():
    for name in ("deploy.yaml", "ci/Build.YML", "pyproject.toml", "tsconfig.json"):
        assert is_config_name(name) and is_code_name(name)
    for name in ("notes.md", "yaml", "readme.txt", "deploy.yaml.md"):
        assert not is_config_name(name)


def test_keys_enclosing_a_line_are_read_by_indentation_and_tables_by_header():
    assert key_path("d.yaml", DEPLOY, at(DEPLOY, "pool_size")) == ["database"]
    assert key_path("d.yaml", DEPLOY, at(DEPLOY, "database:")) == ["database"]  # opened here
    assert key_path("d.yaml", DEPLOY, at(DEPLOY, "replicas")) == ["service"]
    assert key_path("d.yaml", DEPLOY, at(DEPLOY, "# Retry")) == []  # a comment: no key
    assert key_path("d.yaml", DEPLOY, at(DEPLOY, "# Owned")) == []
    assert key_path("k.yml", K8S, at(K8S, "image")) == ["spec", "template", "spec",
                                                        "containers"]
    assert key_path("k.yml", K8S, at(K8S, "containerPort")) == [
        "spec", "template", "spec", "containers", "ports"]
    assert key_path("k.yml", K8S, at(K8S, "kind")) == []
    assert key_path("p.toml", PYPROJECT, at(PYPROJECT, "timeout")) == [
        "tool.pytest.ini_options"]
    assert key_path("p.toml", PYPROJECT, at(PYPROJECT, "line-length")) == ["tool.ruff"]
    assert key_path("p.toml", PYPROJECT, at(PYPROJECT, "[tool.ruff]")) == ["tool.ruff"]
    assert key_path("t.json", TSCONFIG, at(TSCONFIG, '"target"')) == ["compilerOptions"]
    assert key_path("t.json", TSCONFIG, at(TSCONFIG, '"@app')) == ["compilerOptions", "paths"]
    assert key_path("t.json", TSCONFIG, at(TSCONFIG, '"src"\n')) == ["include"]


COMPOSE = """\
services:
  web:
    image: nginx:1.25
    port: 8080
  db: &db
    image: postgres:16
    port: 5432
  init: |
    CREATE TABLE users:
      id int
  cache: !!map
    port: 6379
"""
SERVERS = """\
[servers.alpha]
allowed_ranges = [
  ["10.0.0.0", "10.0.0.255"],
  ["192.168.0.0", "192.168.0.255"]
]
max_connections = 500
[servers."beta.eu"]
max_connections = 200
"""


def test_anchors_tags_block_scalars_array_rows_quoted_keys_and_crlf():
    """A key with an anchor or a tag opens its block ("db: &db": the db's port was cited
    under "web"); a block scalar's lines are text, never keys; an array's row is no TOML
    table (it took over the section, and the answer quoted the next table's value); a quoted
    key keeps both quotes; Windows line ends still end a key's line."""
    assert key_path("c.yaml", COMPOSE, at(COMPOSE, "port: 5432")) == ["services", "db"]
    assert key_path("c.yaml", COMPOSE, at(COMPOSE, "id int")) == ["services", "init"]
    assert key_path("c.yaml", COMPOSE, at(COMPOSE, "port: 6379")) == ["services", "cache"]
    assert key_path("s.toml", SERVERS, at(SERVERS, "max_connections = 500")) == [
        "servers.alpha"]
    assert key_path("s.toml", SERVERS, at(SERVERS, "max_connections = 200")) == [
        'servers."beta.eu"']
    crlf = DEPLOY.replace("\n", "\r\n")
    assert key_path("d.yaml", crlf, at(crlf, "pool_size")) == ["database"]
    assert key_path("p.toml", PYPROJECT.replace("\n", "\r\n"), at(PYPROJECT, "line-length")
                    ) == ["tool.ruff"]
    rows = "[server]\nports = [\n  [8080],\n  [8443]\n]\ntimeout = 30\n"
    assert key_path("r.toml", rows, at(rows, "timeout")) == ["server"]  # "[8443]": a row


def test_a_very_long_line_and_deep_nesting_are_read_once():
    """A key line of ten million spaces, and 3,000 nested keys: each read in one pass (the
    key pattern is possessive), and a path keeps its `DEPTH` innermost keys."""
    long_line = "a" + " " * 10_000_000 + ":\n" + "x: 1\n" * 3
    assert key_path("b.yaml", long_line, len(long_line) - 2) == []
    header = "[a" + " " * 1_000_000 + "x\nk = 1\n"  # 200,000 spaces took 23 s
    assert key_path("b.toml", header, len(header) - 2) == []
    deep = "".join(" " * i + f"k{i}:\n" for i in range(3_000))
    assert key_path("d.yaml", deep, len(deep) - 2) == [f"k{i}" for i in range(2_992, 3_000)]
    # a line back at indentation 1 under 3,000 deeper keys: no section, after 72 steps up
    # (its key, k0, is 2,999 steps up: every chunk after the nest walked all of them)
    flat = deep + " x: 1\n"
    assert key_path("d.yaml", flat, len(flat) - 2) == []
    shallow = "".join(" " * i + f"k{i}:\n" for i in range(40)) + " x: 1\n"
    assert key_path("d.yaml", shallow, len(shallow) - 2) == ["k0"]


def test_within_a_chunk_a_line_sits_under_as_many_of_its_section_as_its_indentation_says():
    """A chunk starts at a line's start, indentation kept (`line_start`), so its first line
    says how deep its section's keys are: a later line dedented, or a key it opens, sits
    under as many of them as its own indentation says."""
    chunk = DEPLOY[DEPLOY.rfind("\n", 0, at(DEPLOY, "replicas")) + 1:]
    assert within("d.yaml", ["service"], chunk, at(chunk, "port")) == ["service"]
    assert within("d.yaml", ["service"], chunk, at(chunk, "pool_size")) == ["database"]
    nested = K8S[K8S.rfind("\n", 0, at(K8S, "spec:\n      containers")) + 1:]
    assert within("k.yml", ["spec", "template", "spec"], nested, at(nested, "image")) == [
        "spec", "template", "spec", "containers"]
    # a chunk begun deep in one service's environment
    deep = ("      API_KEY: x\n      LOG: y\n    healthcheck:\n      interval: 30s\n"
            "    replicas_api: 5\n  worker:\n    image: w\n")
    outer = ["services", "api", "environment"]
    assert within("c.yaml", outer, deep, at(deep, "LOG")) == outer
    assert within("c.yaml", outer, deep, at(deep, "interval")) == [
        "services", "api", "healthcheck"]
    assert within("c.yaml", outer, deep, at(deep, "replicas_api")) == ["services", "api"]
    assert within("c.yaml", outer, deep, at(deep, "image")) == ["services", "worker"]
    # four spaces a level, and a JSON file, whose root brace indents its top-level keys
    four = "            API_KEY: x\n        replicas_api: 5\n"
    assert within("c.yaml", outer, four, at(four, "replicas")) == ["services", "api"]
    settings = '      "port": 80\n    }\n  },\n  "logging": {\n    "level": "debug"\n'
    assert within("s.json", ["servers", "alpha"], settings, at(settings, '"level"')) == [
        "logging"]
    assert within("s.json", ["servers", "alpha"], settings, at(settings, '"port"')) == [
        "servers", "alpha"]


def test_a_config_files_chunks_start_at_a_line_start_with_its_indentation():
    doc = Document("deploy.yaml", DEPLOY, "deploy.yaml", {"path": "deploy.yaml"})
    chunks = chunk_document(doc, ChunkerConfig(size=16, overlap=4))
    assert all(c.start == 0 or DEPLOY[c.start - 1] == "\n" for c in chunks)
    assert any(c.text.startswith("  ") for c in chunks)


def test_a_config_files_chunks_have_its_keys_as_section_and_context():
    """Small chunks of the YAML file: each chunk's section is the key over its first line
    (it was the comment above it, "Database connection", or "Owned by the platform team"),
    and the structural context says "In: database." with no "Section:"."""
    doc = Document("deploy.yaml", DEPLOY, "deploy.yaml", {"path": "deploy.yaml"})
    chunks = chunk_document(doc, ChunkerConfig(size=16, overlap=0))
    assert [c.metadata["chunker"] for c in chunks] == ["code"] * len(chunks)
    sections = {c.text.split("\n", 1)[0].strip(): c.metadata["section"] for c in chunks}
    assert sections["host: db.internal.example"] == ["database"]
    assert sections["name: billing-api"] == ["service"]
    assert sections["# Retry policy for outgoing webhooks"] == []  # a comment, then the key
    contexts = dict(zip((c.text.split("\n", 1)[0].strip() for c in chunks),
                        structural_contexts(doc, chunks)))
    assert "In: database." in contexts["host: db.internal.example"]
    assert not any("Section:" in context for context in contexts.values())


def test_each_line_is_a_unit_read_under_its_keys_and_cited_under_them():
    found = units(DEPLOY, code=True)
    read = dict(zip((u.text.strip() for u in found),
                    readings("deploy.yaml", "—", blocks(DEPLOY), found)))
    assert read["pool_size: 25"] == "database > pool_size: 25"
    assert read["replicas: 4"] == "service > replicas: 4"
    assert read["# Owned by the platform team"] == "# Owned by the platform team"
    texts = [u.text for u in found if u.end == u.start + 1]
    block = next(i for i, t in enumerate(texts) if t.strip() == "max_retries: 7")
    assert cited_tag("[Source: deploy.yaml | Section: —]", texts[:block + 1],
                     "deploy.yaml") == "[Source: deploy.yaml | Section: webhooks]"


def test_ragkit_ask_offline_answers_from_a_config_file(tmp_path, here):
    """`ragkit index` a folder with a YAML and a TOML file, then `ragkit ask` (`here`: in
    this process): the answer quotes the setting's line and cites the file under its keys."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "deploy.yaml").write_text(DEPLOY)
    (docs / "pyproject.toml").write_text(PYPROJECT)
    done = index_and_ask(here, tmp_path, docs, "What is the database pool size?")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "pool_size: 25 [1] # Database connection [1]",  # never the bare key "database:"
        "[1] deploy.yaml#0 — deploy.yaml / database"]
    done = ask(here, tmp_path, "What is the pytest timeout?")
    assert done.stdout.splitlines()[1:] == [
        "[1] pyproject.toml#0 — pyproject.toml / tool.pytest.ini_options",
        "[2] deploy.yaml#0 — deploy.yaml / database"]
    assert done.stdout.startswith("timeout = 45 [1]")
    assert "[tool.pytest.ini_options]" not in done.stdout  # a table header is a label


def test_a_bare_key_or_table_header_is_a_label_and_a_key_with_a_value_is_not():
    assert opens_block("d.yaml", "  database:\n") and opens_block("d.yaml", '"paths": {')
    assert opens_block("p.toml", "[tool.ruff]") and opens_block("p.toml", "[[servers]]")
    assert not opens_block("d.yaml", "pool_size: 25") and not opens_block("p.toml", "a = 1")
    assert not opens_block("d.yaml", "# Database connection")
    assert not opens_block("notes.md", "Refunds:")  # a prose line ending in a colon
