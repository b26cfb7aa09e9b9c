"""Judge integrity: detectors of pooled texts that address the judge, copy the exam, stuff the
query's words, or repeat one text (issue 23). Each detector is a pure function over texts;
:func:`audit_texts` runs them all over a pool."""
from exampp.audit.detect import DEFAULT, NUGGET_EXAM, WINDOW, Thresholds, audit_texts, long_texts
from exampp.audit.flags import CLASSES, Flag

__all__ = ["CLASSES", "DEFAULT", "NUGGET_EXAM", "WINDOW", "Flag", "Thresholds", "audit_texts", "long_texts"]
