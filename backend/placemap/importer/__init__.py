"""Imports uploaded trace files by running the Go importer (`placemap-collect import`)."""

from placemap.importer.runner import ImportFailedError, import_file

__all__ = ["ImportFailedError", "import_file"]
