"""Grading methods, one module each behind :class:`exampp.grading.base.Grader`, and the runner.

self_rating, qa, direct, multiple_choice, embedding: the graders; prompts: the method's prompts
verbatim; parsing / verify: reading model output and checking answers; registry: grader names
for the CLI; runner: pooling x exam -> incremental, crash-safe grading into the store.
"""
