"""Voyage embeddings at batch prices: Voyage's Batch API, resumable (`--embedder voyage:M --batch`).

What it is: `VoyageBatches(what, sdk, options).run(endpoint, params, items)` answers request
bodies of one Voyage endpoint (`/v1/embeddings`, `/v1/contextualizedembeddings`) through
Voyage's Batch API — 33 % below the list price (`ragkit.pricing.VOYAGE_BATCH_DISCOUNT`),
results within a 12-hour window:
1. each item is `(custom_id, body)`; the caller derives the custom_id from its embedding-cache
   key, so the same text is the same request in every run;
2. open batches in the journal (`ragkit.batch_journal`, api "voyage", this base URL) that
   hold needed custom_ids are polled, never submitted again; the rest is written as a JSONL
   input file (`{"custom_id", "body"}` per line), uploaded (`POST /files`, purpose
   "batch"), and a job created (`POST /batches` with `input_file_id`, `endpoint`,
   `completion_window` "12h" and the model and parameters as `request_params`, which Voyage
   sets per batch, not per line); the job is journaled as soon as Voyage accepts it (a
   journaled job Voyage no longer knows has its requests submitted once more);
3. polling (`GET /batches/{id}`) starts at 1 s and doubles up to `poll` seconds; when the
   job is `completed` (or `failed` / `expired` / `cancelled`: whatever output exists is
   used) the output file (`GET /files/{output_file_id}/content`, JSONL with `custom_id` and
   `response.body`) is read and matched by custom_id, in any order (a line for an id not
   sent, or a second line for one, is left out; a line without a 2xx body the caller can
   use counts as no result; one log line says how many of each);
4. items without a usable result are retried as `retry` says: "interactive" (the caller's
   `fallback`, the ordinary endpoint at list price), "batch" (one more job) or "none" (the
   run fails, naming the counts, the results that came in a `PartialResults` to keep).

The vectors go to the caller (its embedding cache keeps them); a job's journal record goes
once its output is read.

Why not the SDK: voyageai 0.5.0 has no files or batch API, so this module speaks HTTP
(`httpx2`) with the SDK's base URL (`ragkit.voyage.address`), key and time budget
(`ragkit.online.budget()`, each request tried once, each reply whole within the timeout,
`ragkit.whole_reply`, the output file per read); errors are one line without the key
(`ragkit.online.scrub`). The shapes follow docs.voyageai.com/docs/batch-inference (Public
Preview, read 2026-12-02): it may change.
"""
from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from typing import Any

import httpx2

from ragkit.batch_journal import BatchRecord, Journal, split
from ragkit.documents import RagkitError
from ragkit.errors import Interrupted, PartialResults
from ragkit.online import budget, scrub
from ragkit.progress import note
from ragkit.voyage import address
from ragkit.text_stats import counted
from ragkit.whole_reply import STREAMED, httpx_hooks, stalled_after, trickled_after

# Per input file, as Voyage announced the Batch API (reported, not on its reference page):
MAX_LINES = 100_000  # requests
MAX_BYTES = 1_000_000_000  # bytes (1 GB)
DONE = ("completed", "failed", "expired", "cancelled")


class VoyageBatches:
    """Run Voyage requests through its Batch API (see the module docstring)."""

    def __init__(self, what: str, sdk: Any, options: dict[str, Any] | None = None) -> None:
        options = options or {}
        self.what = what
        self.poll = float(options.get("poll", 60.0))
        self.timeout = options.get("timeout")
        self.retry = options.get("retry", "interactive")
        self.log: Callable[[str], None] = options.get("log") or note
        self.base = address(sdk).rstrip("/")
        self.key = sdk.api_key
        self.limits = limits = budget()
        self.http = httpx2.Client(headers={"Authorization": f"Bearer {self.key}"},
                                  timeout=httpx2.Timeout(limits.read, connect=limits.connect),
                                  event_hooks=httpx_hooks())  # one trickling in held it
        self.journal = Journal("voyage", self.base)
        self.created: list[str] = []
        self.resumed: list[str] = []
        self.tokens, self.unreported = 0, 0  # results with and without a token count
        self.lost: set[str] = set()  # custom_ids of journaled jobs Voyage no longer knows
        self.check: Callable[[str, dict], str | None] | None = None

    def _request(self, method: str, path: str, missing_ok: bool = False,
                 **kwargs: Any) -> httpx2.Response | None:
        """The reply; None for a 404 when `missing_ok`; anything else failing is one line
        (tried once: a POST sent again could submit a job twice; the journal resumes)."""
        try:
            reply = self.http.request(method, f"{self.base}{path}", **kwargs)
        except httpx2.HTTPError as exc:
            problem = (f"cannot reach the Voyage Batch API at {self.base} ({exc})"
                       if not isinstance(exc, httpx2.TimeoutException)
                       or isinstance(exc, httpx2.ConnectTimeout) else
                       f"the Voyage Batch API at {self.base} " + self.limits.timed_out(
                           trickled_after(exc), stalled_after(exc), retried=False))
            raise RagkitError(scrub(f"{self.what}: {problem}; {self._hint()}", self.key)) from None
        if reply.status_code == 404 and missing_ok:
            return None
        if reply.status_code >= 400:
            raise RagkitError(scrub(f"{self.what}: Voyage Batch API {method} {path}: HTTP "
                                    f"{reply.status_code}: {reply.text[:300]}; {self._hint()}",
                                    self.key))
        return reply

    def _parsed(self, reply: httpx2.Response, method: str, path: str) -> dict[str, Any]:
        """The reply's JSON object; anything else (a proxy's login page) is one line."""
        try:
            body = reply.json()
        except ValueError:
            body = None
        if not isinstance(body, dict):
            raise RagkitError(scrub(f"{self.what}: Voyage Batch API {method} {path}: not a "
                                    f"JSON object ({reply.text[:100]}); {self._hint()}",
                                    self.key))
        return body

    def _hint(self) -> str:
        return (f"the journal in {self.journal.folder} keeps submitted jobs: re-run the same "
                f"command to collect them without sending them again")

    def run(self, endpoint: str, params: dict[str, Any], items: Sequence[tuple[str, dict]],
            fallback: Callable[[list[dict]], list[dict]],
            check: Callable[[str, dict], str | None] | None = None) -> dict[str, dict]:
        """custom_id → response body for every item (see the module docstring). `check(id,
        body)` names what makes a 2xx body unusable (no vectors, the wrong count): such a
        result counts as none, retried as `retry` says. With `retry` "batch" or "none", what
        stays without a result is a `PartialResults` holding the bodies that came."""
        needed = dict(items)
        self.check = check
        done: dict[str, dict] = {}
        with self.journal.submitting():  # two runs at once submit one job between them
            open_ = [r for r in self.journal.open_batches() if r.extra.get("endpoint") ==
                     endpoint and needed.keys() & set(r.custom_ids)]
            if open_:
                self.resumed += [r.id for r in open_]
                self.log(f"resuming {len(open_)} Voyage batch(es) from the journal in "
                         f"{self.journal.folder}: {', '.join(r.id for r in open_)}")
            queued = {k for r in open_ for k in r.custom_ids}
            open_ += self._submit(endpoint, params,
                                  [(k, needed[k]) for k in needed if k not in queued])
        try:
            return self._rounds(endpoint, params, needed, open_, done, fallback)
        except PartialResults:
            raise
        except RagkitError as exc:  # a later job failing: the results read so far, whose
            if not done:  # journal records are gone, stay the caller's to keep
                raise
            raise PartialResults(str(exc), done) from None
        except KeyboardInterrupt:  # Ctrl-C likewise
            if not done:
                raise
            raise Interrupted("interrupted", done) from None

    def _rounds(self, endpoint: str, params: dict[str, Any], needed: dict[str, dict],
                open_: list[BatchRecord], done: dict[str, dict],
                fallback: Callable[[list[dict]], list[dict]]) -> dict[str, dict]:
        """Wait for the jobs, send again what Voyage lost or (`retry` "batch") what got no
        result, then as `retry` says (see `run`)."""
        fresh: list[str] = []
        rounds, resent = (2 if self.retry == "batch" else 1), set()
        while True:
            open_ = open_ + self._submit(endpoint, params, [(k, needed[k]) for k in fresh])
            self._wait(open_, needed, done)
            fresh, open_ = [k for k in needed if k not in done], []
            lost = [k for k in fresh if k in self.lost and k not in resent]
            if lost:  # a journaled job Voyage no longer knows: send again, not a retry
                resent.update(lost)
                fresh = lost
                continue
            rounds -= 1
            if not fresh or self.retry != "batch" or rounds == 0:
                break
        if fresh:
            if self.retry != "interactive":
                raise PartialResults(f"{self.what}: {len(fresh)} batch request(s) got no usable "
                                     f"result (re-run to send them again, or use --batch-retry "
                                     f"interactive)", done)
            self.log(f"{self.what}: {len(fresh)} batch request(s) got no usable result: "
                     f"sending them interactively (list price)")
            try:
                bodies = fallback([needed[k] for k in fresh])
            except RagkitError as exc:  # the batch's results stay the caller's to keep
                raise PartialResults(f"{exc} (sending {len(fresh)} request(s) without a batch "
                                     f"result interactively)", done) from None
            for key, body in zip(fresh, bodies, strict=True):
                done[key] = body
        return done

    def _submit(self, endpoint: str, params: dict[str, Any],
                items: list[tuple[str, dict]]) -> list[BatchRecord]:
        made = []
        lines = [{"custom_id": key, "body": body} for key, body in items]
        for group in split(lines, MAX_LINES, MAX_BYTES):
            data = "".join(json.dumps(line) + "\n" for line in group)
            file = self._parsed(self._request(
                "POST", "/files", data={"purpose": "batch"}, files={"file": (
                    "ragkit-batch.jsonl", data.encode(), "application/jsonl")}),
                "POST", "/files")
            job = self._parsed(self._request("POST", "/batches", json={
                "input_file_id": file["id"], "endpoint": endpoint, "completion_window": "12h",
                "request_params": params}), "POST", "/batches")
            record = BatchRecord("voyage", self.base, job["id"], [x["custom_id"] for x in group],
                                 extra={"endpoint": endpoint, "input_file_id": file["id"]})
            self.journal.write(record)  # before anything waits on it
            self.created.append(job["id"])
            self.log(f"Voyage batch {job['id']}: {counted(len(group), 'request')} submitted "
                     f"(journal: {self.journal.path(job['id'])})")
            made.append(record)
        return made

    def _wait(self, open_: list[BatchRecord], needed: dict[str, dict],
              done: dict[str, dict]) -> None:
        start, delay, waiting = time.monotonic(), 1.0, list(open_)
        try:
            while waiting:
                for record in list(waiting):
                    reply = self._request("GET", f"/batches/{record.id}", missing_ok=True)
                    if reply is None:
                        self.log(f"Voyage batch {record.id}: unknown to Voyage; its requests "
                                 f"are sent again")
                        self.lost.update(record.custom_ids)
                        self.journal.remove(record)
                        waiting.remove(record)
                        continue
                    job = self._parsed(reply, "GET", f"/batches/{record.id}")
                    status, counts = job.get("status", ""), job.get("request_counts") or {}
                    if (status, counts) != (record.status, record.counts):
                        record.status, record.counts = status, counts
                        self.journal.write(record)
                        self.log(f"Voyage batch {record.id}: {status}, "
                                 + ", ".join(f"{k} {v}" for k, v in counts.items()))
                    if status in DONE:
                        self._collect(job, needed, done)
                        self.journal.remove(record)
                        waiting.remove(record)
                if not waiting:
                    return
                if self.timeout is not None and time.monotonic() - start >= self.timeout:
                    raise RagkitError(f"{self.what}: {len(waiting)} Voyage batch(es) still "
                                      f"running ({', '.join(r.id for r in waiting)}); "
                                      f"{self._hint()}")
                time.sleep(min(delay, self.poll))
                delay *= 2
        except KeyboardInterrupt:
            self.log(f"interrupted: Voyage batch(es) {', '.join(r.id for r in waiting)} keep "
                     f"running; {self._hint()}")
            raise

    def _collect(self, job: dict, needed: dict[str, dict], done: dict[str, dict]) -> None:
        """The job's output lines with a 2xx body, by custom_id (any order)."""
        if not job.get("output_file_id"):
            return
        text = self._request("GET", f"/files/{job['output_file_id']}/content",  # may be GBs:
                             extensions={STREAMED: True}).text  # only each read is bounded
        strangers, unusable = 0, {}
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:  # a file cut short (or not JSONL) is one line; the journal keeps the job
                row = json.loads(line)
                if not isinstance(row, dict):
                    raise ValueError("not an object")
            except (ValueError, RecursionError) as exc:  # RecursionError: "[" × 100,000
                why = exc if isinstance(exc, ValueError) else "nested too deeply"
                raise RagkitError(f"{self.what}: Voyage batch {job.get('id')}: output file "
                                  f"{job['output_file_id']} line {number}: not a result ("
                                  f"{why}); {self._hint()}") from None
            key = row.get("custom_id") if isinstance(row.get("custom_id"), str) else None
            response = row.get("response")
            status = response.get("status_code", 200) if isinstance(response, dict) else None
            if key not in needed or key in done:  # not asked for, or a repeat: counted once
                strangers += 1
            elif isinstance(status, int) and status >= 300:
                continue  # an error: no result, retried as `retry` says
            elif problem := self._problem(key, response):
                unusable.setdefault(problem, number)
            else:
                done[key] = response["body"]
                tokens = (done[key].get("usage") or {}).get("total_tokens")
                self.tokens += tokens if isinstance(tokens, int) else 0
                self.unreported += not isinstance(tokens, int)  # no count: unknown, not 0
        if strangers or unusable:
            first = next(iter(unusable.items()), None)
            self.log(f"Voyage batch {job.get('id')}: " + "; ".join(filter(None, [
                strangers and f"{strangers} result(s) for requests it was not sent or given "
                              f"twice, left out",
                first and f"results not usable, counted as none (first: line {first[1]}: "
                          f"{first[0]})"])))

    def _problem(self, key: str, response: Any) -> str | None:
        """What makes a line that is not an error unusable: no response or body object, a
        status that is not a number, or `check`'s reason."""
        if not isinstance(response, dict):
            return "no response object"
        if not isinstance(response.get("status_code", 200), int):
            return f"status_code {response['status_code']!r} is not a number"
        body = response.get("body")
        if not isinstance(body, dict) or not body:
            return "no body object"
        return self.check(key, body) if self.check else None
