"""ir_datasets access shared by the topic, qrels and corpus readers (``irds:<dataset-id>``)."""
from __future__ import annotations

from typing import Any

from exampp.errors import InputError

IRDS_PREFIX = "irds:"


def load_ir_dataset(source: str) -> Any:
    """The ir_datasets dataset named by ``irds:<dataset-id>`` (ir_datasets is imported only now)."""
    dataset_id = source[len(IRDS_PREFIX):] if source.startswith(IRDS_PREFIX) else source
    try:
        import ir_datasets
    except ImportError as exc:
        raise ImportError(f"{source}: reading ir_datasets needs the ir-datasets package "
                          "(pip install 'exampp[datasets]')") from exc
    try:
        return ir_datasets.load(dataset_id)
    except KeyError:
        raise InputError(source, None, f"unknown ir_datasets dataset {dataset_id!r}") from None
