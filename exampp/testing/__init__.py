"""Helpers for exampp's tests and benchmarks, as ``numpy.testing`` is numpy's: OpenAI-compatible servers
on loopback and tiny random-weight models. Nothing in exampp imports them (the layers contract in
pyproject.toml keeps this package above every other).

- :mod:`~exampp.testing.loopback`: the HTTP side the servers share.
- :mod:`~exampp.testing.openai_server`: a server of a local model or of canned replies
  (``python -m exampp.testing.openai_server --replies FILE`` serves a file of them).
- :mod:`~exampp.testing.batching_server`: a simulated continuous-batching server.
- :mod:`~exampp.testing.batch_server`: a stub of the OpenAI Batch API.
- :mod:`~exampp.testing.server_process`: a server in a process of its own.
- :mod:`~exampp.testing.tiny_models`: tiny random-weight models (needs the ``llm`` extra).
"""
