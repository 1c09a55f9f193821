"""``python -m lsp_server`` is the ``codedraft`` command."""

from __future__ import annotations

import sys

from lsp_server.cli import main

sys.exit(main())
