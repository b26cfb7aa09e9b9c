"""Generating question banks (phase 1 of EXAM++) and multiple-choice exams: asking a generating
LLM, reading what it answers, keeping it in a journal."""
