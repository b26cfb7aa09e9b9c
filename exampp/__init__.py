"""exampp: EXAM++ answerability evaluation for retrieval and RAG systems."""
from exampp.collection import Qrels, RankedDoc, Run, read_qrels, read_run, read_runs, write_qrels, write_run
from exampp.errors import InputError

__version__ = "0.1.0"
__all__ = ["InputError", "Qrels", "RankedDoc", "Run", "read_qrels", "read_run", "read_runs", "write_qrels", "write_run"]
