"""The seqrt sequence ops (OPS.md) as PyTorch functions that export as
`seqrt`-domain ONNX nodes with ONNX functions defining them."""

from .attention import SPEC as _ATTENTION, attention
from .neural_memory import SPEC as _NEURAL_MEMORY, neural_memory
from .retention import SPEC as _RETENTION, default_gammas, retention
from .runge_kutta import SPEC as _RUNGE_KUTTA, runge_kutta
from .selective_scan import SPEC as _SELECTIVE_SCAN, selective_scan
from .ssd import SPEC as _SSD, ssd

SPECS = {spec.name: spec for spec in (_ATTENTION, _RETENTION, _SELECTIVE_SCAN,
                                      _SSD, _RUNGE_KUTTA, _NEURAL_MEMORY)}

__all__ = ["attention", "retention", "selective_scan", "ssd", "runge_kutta",
           "neural_memory", "default_gammas", "SPECS"]
