"""Parts of compare_onnxruntime.py: the models, the engine runners and the
onnxruntime worker that runs in its own process."""
