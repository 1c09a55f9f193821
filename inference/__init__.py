"""codedraft inference."""

from importlib.metadata import PackageNotFoundError, version


def codedraft_version() -> str:
    """The installed codedraft version (``0+unknown`` when run from a checkout that is not installed)."""
    try:
        return version("codedraft")
    except PackageNotFoundError:
        return "0+unknown"
