"""What a collection is, as data: runs and rankings, qrels, topics, questions and question banks,
passages and the corpus protocol, grades; and what an id may be. No file is read here: the file
formats are :mod:`exampp.formats`.

Import from the submodules (``exampp.collection.runs`` ...) or from the top-level ``exampp``.
"""
