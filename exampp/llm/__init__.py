"""Models behind one interface (:mod:`.backend`): local HuggingFace, sentence embeddings, the SQuAD2
reader and OpenAI-compatible servers, one module each in :mod:`.backends`; devices, batching and
model location. All model loading lives here."""
