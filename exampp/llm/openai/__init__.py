"""The ``openai`` backend: OpenAI-compatible servers, and the OpenAI Batch API.

- :mod:`~exampp.llm.openai.wire`: the wire format, the JSON of a request and the reading of an answer,
  checked (no ``openai`` package needed);
- :mod:`~exampp.llm.openai.transport`: the HTTP client under the SDK, bounded in time and bytes, refusing
  redirects;
- :mod:`~exampp.llm.openai.book`: the protocol by which the backend asks a book of answers before it sends
  a request, and what a book may ask of the backend;
- :mod:`~exampp.llm.openai.backend`: :class:`~exampp.llm.openai.backend.OpenAIBackend`, its event loop,
  concurrency and retries;
- :mod:`~exampp.llm.openai.batch`: the Batch API, a book of its answers and the client that submits,
  polls and downloads its batches.

Each imports only those above it in this list. ``--backend openai`` finds the backend through
:mod:`exampp.llm.backends.openai`.
"""
