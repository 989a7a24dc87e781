"""The package's version: in every cache key and in ``--version``."""

__version__ = "0.1.0"
