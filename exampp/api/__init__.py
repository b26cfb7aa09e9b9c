"""The application layer: whole jobs (grade, cover, qrels, irt, correlate) as Python calls that
return result objects. The command line parses flags, calls these and prints what they return."""
