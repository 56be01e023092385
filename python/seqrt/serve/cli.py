"""`seqrt serve MODEL... [--replicas N] [--backend ...] [--port ...]`: serves
models over HTTP until interrupted. Joins the Ray cluster RAY_ADDRESS names,
else starts a local Ray instance.
Also `seqrt-serve` and `python -m seqrt.serve`."""

import argparse
import os
import signal
import sys
import threading

from .deployments import ModelConfig, ServerConfig, build_app


def parse(argv):
    parser = argparse.ArgumentParser(
        prog="seqrt serve", description=__doc__.split("\n\n")[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("models", nargs="+", metavar="MODEL",
                        help=".onnx or .seqrt file; NAME=PATH serves it as "
                             "NAME (default: the file's stem)")
    parser.add_argument("--replicas", type=int, default=1,
                        help="replicas of each model")
    parser.add_argument("--backend", default="cpu",
                        help="a backend or a list such as vulkan,cpu")
    parser.add_argument("--threads", type=int, default=0,
                        help="threads per replica (0: the backend's default)")
    parser.add_argument("--num-cpus", type=float, default=1.0,
                        help="CPUs Ray reserves per replica")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--no-batching", action="store_true",
                        help="run each stateless request on its own")
    parser.add_argument("--max-batch-size", type=int, default=8)
    parser.add_argument("--batch-wait-ms", type=float, default=5.0,
                        help="how long a batch waits to fill")
    parser.add_argument("--max-sessions", type=int, default=64,
                        help="decode sessions per replica")
    parser.add_argument("--session-idle-timeout", type=float, default=600.0,
                        help="seconds before an idle session is closed")
    parser.add_argument("--max-body-bytes", type=int, default=64 << 20)
    args = parser.parse_args(argv)
    if args.replicas < 1 or args.max_batch_size < 1 or args.max_sessions < 1:
        parser.error("--replicas, --max-batch-size and --max-sessions must "
                     "be at least 1")
    return args


def config_of(args) -> ServerConfig:
    models = []
    for spec in args.models:
        name, _, path = spec.rpartition("=")
        if not os.path.isfile(path):
            raise SystemExit(f"seqrt serve: no model file '{path}'")
        backend = args.backend.split(",") if "," in args.backend \
            else args.backend
        models.append(ModelConfig(
            path, name or None, replicas=args.replicas, backend=backend,
            num_threads=args.threads, num_cpus=args.num_cpus,
            batching=not args.no_batching,
            max_batch_size=args.max_batch_size,
            batch_wait_ms=args.batch_wait_ms, max_sessions=args.max_sessions,
            session_idle_timeout_s=args.session_idle_timeout))
    return ServerConfig(models, max_body_bytes=args.max_body_bytes)


def stop_on_signals(stop: threading.Event) -> None:
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())


def main(argv=None) -> int:
    args = parse(sys.argv[1:] if argv is None else argv)
    config = config_of(args)
    # Ctrl-C or SIGTERM, even while starting: stop Serve and Ray cleanly.
    stop = threading.Event()
    stop_on_signals(stop)
    import ray
    from ray import serve

    # address=None with RAY_ADDRESS unset starts a local instance.
    ray.init(address=os.environ.get("RAY_ADDRESS"))
    serve.start(http_options={"host": args.host, "port": args.port})
    serve.run(build_app(config), name="seqrt", route_prefix="/")
    names = ", ".join(model.served_name() for model in config.models)
    print(f"seqrt serve: {names} at http://{args.host}:{args.port}/v1/models "
          f"(Ctrl-C stops)", flush=True)
    stop_on_signals(stop)  # again: Ray may have set its own
    while not stop.wait(1.0):
        pass
    print("seqrt serve: stopping", flush=True)
    if os.environ.get("RAY_ADDRESS"):
        serve.delete("seqrt")  # a shared cluster keeps its other apps
    else:
        serve.shutdown()
    ray.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
