"""``python -m dueling_gym``: the ``dueling-gym`` command line."""

import sys

from dueling_gym.cli import main

if __name__ == "__main__":
    sys.exit(main())
