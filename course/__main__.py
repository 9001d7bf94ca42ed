"""`python -m course ...`: the command-line interface (see course/cli/)."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
