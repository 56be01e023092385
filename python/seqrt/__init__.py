"""seqrt: a compute-graph runtime for sequence models.

This package holds the Python side of seqrt. `seqrt.export` turns PyTorch
modules that use seqrt's sequence ops into ONNX files that both seqrt (as
fused ops) and any other ONNX runtime (through ONNX functions) can run.
"""

__version__ = "0.1.0"
