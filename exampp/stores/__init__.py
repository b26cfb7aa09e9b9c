"""The workspace (:mod:`.layout`) and the SQLite stores in it: the grade store and the Batch API's journal
kept in its file, the assessors' labels, a question bank's versions (kept beside the bank); what the
grade and label stores share (:mod:`.sqlite_file`).
"""
