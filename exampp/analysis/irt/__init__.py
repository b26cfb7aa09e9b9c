"""Item response theory for exams: estimators, abilities, hierarchical abilities (see models.py)."""
from exampp.analysis.irt.abilities import eap, mle
from exampp.analysis.irt.base import clone
from exampp.analysis.irt.hierarchical import HierarchicalAbility
from exampp.analysis.irt.likelihood import irf, normal_quadrature
from exampp.analysis.irt.models import IRTModel

__all__ = ["HierarchicalAbility", "IRTModel", "clone", "eap", "irf", "mle", "normal_quadrature"]
