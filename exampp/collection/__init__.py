"""Collections: runs, qrels, topics, question banks, passage corpora, leaderboards — readers and writers.

Import from the submodules (``exampp.collection.runs`` ...) or from the top-level ``exampp``.
"""
