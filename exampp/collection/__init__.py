"""Collections: runs, qrels, topics, question banks, passage corpora — readers and writers."""
from exampp.collection.qrels import Qrels, read_qrels, write_qrels
from exampp.collection.runs import RankedDoc, Run, read_run, read_runs, write_run

__all__ = ["Qrels", "RankedDoc", "Run", "read_qrels", "read_run", "read_runs", "write_qrels", "write_run"]
