"""Backends, one per module; the module name is the backend name (``--backend hf``)."""
