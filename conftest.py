"""Environment for reproducible notebook outputs under nbval (set before kernels start)."""
import os

os.environ.setdefault("IPYKERNEL_CELL_NAME", "<IPY-INPUT>")
os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
os.environ.setdefault("TQDM_DISABLE", "1")
