"""A loopback API stand-in run as its own process, so a test can kill it with -9 mid-poll and
serve the same port again (the batch tests: tests/batches_loopback.py,
tests/voyage_batch_loopback.py). The script is started as
`python SCRIPT STATE LOG PORT *ARGS` and writes its port to `STATE.port`; it logs one JSON
object per request to LOG."""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path


class LoopbackProcess:
    """The server process; `restart()` kills it with -9 and serves the same port again."""

    def __init__(self, script: Path, state: Path, log: Path, *args: object) -> None:
        self.script, self.state, self.log, self.args, self.port = script, state, log, args, 0
        self.proc = self._start()

    def _start(self) -> subprocess.Popen:
        port_file = Path(str(self.state) + ".port")
        port_file.unlink(missing_ok=True)
        proc = subprocess.Popen([sys.executable, str(self.script), str(self.state),
                                 str(self.log), str(self.port), *map(str, self.args)])
        for _ in range(100):
            if port_file.exists() and port_file.read_text():
                self.port = int(port_file.read_text())
                return proc
            time.sleep(0.05)
        raise RuntimeError("loopback server did not start")

    def restart(self) -> None:
        self.stop()
        self.proc = self._start()

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def requests(self) -> list[dict]:
        """Every request the server logged, across restarts."""
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]
