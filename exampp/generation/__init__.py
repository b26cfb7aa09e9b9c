"""Question-bank generation (phase 1 of EXAM++): reading what a generating LLM answers."""
