"""simproxy's release, as shown by ``-version``, ``GET .../version`` and exported metadata."""

__version__ = "0.1.0"
VERSION = f"v{__version__}"
