"""``--backend openai``: OpenAI-compatible servers. The backend lives in :mod:`exampp.llm.openai` (its
wire format, transport, backend and the Batch API); this module is its entry among the backends."""
from __future__ import annotations

from exampp.llm.openai.backend import OpenAIBackend

BACKEND = OpenAIBackend
