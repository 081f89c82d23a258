"""lockcheck: find broken single-instance locks in shell and Python job scripts."""

__version__ = "0.2.0"
