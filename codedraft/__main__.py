"""``python -m codedraft`` is the ``codedraft`` command."""

from __future__ import annotations

import sys

from codedraft.cli import main

sys.exit(main())
