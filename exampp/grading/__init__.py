"""Grading: methods as value objects (:mod:`.method`, one module each in :mod:`.methods`, found by
:mod:`.registry`), their prompts, parsing and answer verification, and the runner that grades
pool x exam into the store incrementally and crash-safely. Methods reach models only through
the backend interface of :mod:`exampp.llm.backend`.
"""
