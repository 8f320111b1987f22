"""The ``solar-memory`` command (see :mod:`.main`)."""

from solar_core.cli.main import main

__all__ = ["main"]
