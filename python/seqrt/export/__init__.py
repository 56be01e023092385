"""seqrt.export: PyTorch → ONNX with portable seqrt sequence ops.

    import seqrt.export as sx
    y, _, _ = sx.attention(q, k, v, is_causal=True)   # eager PyTorch
    sx.export(model, (x,), "model.onnx")               # seqrt::Attention + its ONNX function

Every op of OPS.md is a function here (`attention`, `retention`,
`selective_scan`, `ssd`, `runge_kutta`, `neural_memory`); ready layers built
from them are in `seqrt.export.layers`.
"""

from .exporter import export
from .ops import (attention, default_gammas, neural_memory, retention,
                  runge_kutta, selective_scan, ssd)

__all__ = ["export", "attention", "retention", "selective_scan", "ssd",
           "runge_kutta", "neural_memory", "default_gammas"]
