"""The Ray Serve application: one deployment of ModelReplica per model
(its replicas routed by session, router.py) behind one ingress."""

import pathlib
from dataclasses import dataclass, field
from typing import List, Optional, Sequence, Union

from ray import serve
from ray.serve.config import RequestRouterConfig

from .ingress import Ingress
from .replica import ModelReplica


@dataclass
class ModelConfig:
    """How one model is served. Defaults: docs in README.md."""

    path: str
    name: Optional[str] = None  # the file's stem
    replicas: int = 1
    backend: Union[str, Sequence[str]] = "cpu"
    num_threads: int = 0  # 0: the backend's default
    num_cpus: float = 1.0  # what Ray reserves per replica
    batching: bool = True
    max_batch_size: int = 8
    batch_wait_ms: float = 5.0
    max_sessions: int = 64  # per replica
    session_idle_timeout_s: float = 600.0

    def served_name(self) -> str:
        return self.name or pathlib.Path(self.path).stem


@dataclass
class ServerConfig:
    models: List[ModelConfig] = field(default_factory=list)
    max_body_bytes: int = 64 << 20
    max_new_tokens: int = 4096  # per generate request


def build_app(config: ServerConfig):
    """The bound application, for serve.run()."""
    names = [model.served_name() for model in config.models]
    if not names:
        raise ValueError("seqrt.serve needs at least one model")
    if len(set(names)) != len(names):
        raise ValueError(f"two models have one name: {names}; give each a "
                         f"name of its own")
    replica = serve.deployment(ModelReplica)
    bound = {}
    for model, name in zip(config.models, names):
        if model.replicas < 1:
            raise ValueError(f"model '{name}': replicas must be >= 1")
        batching = {"enabled": model.batching,
                    "max_batch_size": model.max_batch_size,
                    "wait_timeout_s": model.batch_wait_ms / 1000}
        bound[name] = replica.options(
            name=f"model-{name}",
            num_replicas=model.replicas,
            # Enough calls in flight for a full batch to gather.
            max_ongoing_requests=max(2 * model.max_batch_size, 16),
            ray_actor_options={"num_cpus": model.num_cpus},
            request_router_config=RequestRouterConfig(
                request_router_class=
                "seqrt.serve.router:SessionAffinityRouter"),
        ).bind(str(pathlib.Path(model.path).resolve()), name, model.backend,
               model.num_threads, batching, model.max_sessions,
               model.session_idle_timeout_s, config.max_new_tokens)
    ingress = serve.deployment(Ingress)
    return ingress.options(
        name="ingress", max_ongoing_requests=1024,
        ray_actor_options={"num_cpus": 0},
    ).bind(bound, config.max_body_bytes, config.max_new_tokens)
