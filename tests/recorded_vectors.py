"""Reference vectors recorded once from an embedder's reference implementation (tests import
`load_recorded`): the arrays of an .npz, its texts as str and its `versions` as a dict."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np


def load_recorded(path: Path) -> dict:
    with np.load(path) as npz:
        data = {name: npz[name] for name in npz.files}
    data["texts"] = [str(t) for t in data["texts"]]
    data["versions"] = json.loads(str(data["versions"]))
    return data
