"""The settings page (docs/settings.md) names every setting the server reads, with its default."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from lsp_server.config import Settings, camel_case

SETTINGS_PAGE = Path(__file__).resolve().parents[2] / "docs" / "settings.md"


def test_every_setting_is_documented() -> None:
    text = SETTINGS_PAGE.read_text(encoding="utf-8")
    settings = Settings()
    missing = [
        f"{camel_case(section.name)}.{camel_case(field.name)}"
        for section in dataclasses.fields(settings)
        for field in dataclasses.fields(getattr(settings, section.name))
        if f"`{camel_case(section.name)}.{camel_case(field.name)}`" not in text
    ]
    assert not missing, f"docs/settings.md does not document {missing}"
