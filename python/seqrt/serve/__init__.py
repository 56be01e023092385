"""seqrt.serve: seqrt models behind Ray Serve (`pip install ./python[serve]`).

    from ray import serve
    from seqrt.serve import ModelConfig, ServerConfig, build_app
    serve.run(build_app(ServerConfig([ModelConfig("model.onnx", replicas=2)])))

or from a shell: `seqrt serve model.onnx --replicas 2` (cli.py). Stateless
runs are batched along the model's batch dim; models with state pairs get
decode sessions pinned to the replica that holds their Stream; models with
a character vocabulary generate text as server-sent events. The HTTP API
and its errors: python/seqrt/serve/README.md.
"""

try:
    import ray  # noqa: F401
    from ray import serve as _serve  # noqa: F401
except ImportError as _error:
    raise ImportError(
        "seqrt.serve needs Ray Serve: pip install './python[serve]' (or "
        "'ray[serve]')") from _error

from .deployments import ModelConfig, ServerConfig, build_app  # noqa: E402

__all__ = ["ModelConfig", "ServerConfig", "build_app"]
