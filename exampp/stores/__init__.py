"""The workspace (:mod:`.layout`) and the SQLite stores in it: the grade store and the Batch API's journal
kept in its file, the assessors' labels, a question bank's versions; what the stores share
(:mod:`.sqlite_file`).
"""
