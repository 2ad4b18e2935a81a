"""``python -m ranklens.cli``."""

import sys

from ranklens.cli import main

sys.exit(main())
