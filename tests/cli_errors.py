"""What a refused command must show: its one error line (tests import `one_error_line`)."""
from __future__ import annotations

import subprocess


def one_error_line(done: subprocess.CompletedProcess) -> str:
    """The command's one error line, after any progress bar or warning: exit status 2, no
    traceback, nothing after it."""
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    (line,) = [x for x in done.stderr.splitlines() if x.startswith("ragkit: error: ")]
    assert done.stderr.rstrip().endswith(line)
    return line
