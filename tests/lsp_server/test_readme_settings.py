"""The README's configuration table names every setting the server reads."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from lsp_server.config import Settings, camel_case

README = Path(__file__).resolve().parents[2] / "README.md"


def test_every_setting_is_documented_in_the_readme() -> None:
    text = README.read_text(encoding="utf-8")
    settings = Settings()
    missing = [
        f"{camel_case(section.name)}.{camel_case(field.name)}"
        for section in dataclasses.fields(settings)
        for field in dataclasses.fields(getattr(settings, section.name))
        if f"`{camel_case(section.name)}.{camel_case(field.name)}`" not in text
    ]
    assert not missing, f"README.md does not document {missing}"
