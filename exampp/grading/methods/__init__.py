"""Grading methods, one module each; every module here is imported to register its methods."""
