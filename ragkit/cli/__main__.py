"""`python -m ragkit.cli`."""
import sys

from ragkit.cli import main

sys.exit(main())
