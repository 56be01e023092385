"""The HTTP front of seqrt.serve: decodes and checks each request against
the model before any replica sees it, and calls the model's replicas by
Ray Serve handle. Routes (python/seqrt/serve/README.md):

  GET    /v1/models                          the models served
  GET    /v1/models/{name}                   one model's inputs and outputs
  POST   /v1/models/{name}:run               a stateless run (batched)
  POST   /v1/models/{name}:generate          text, as server-sent events
  POST   /v1/models/{name}/sessions          a decode session (from a snapshot)
  POST   /v1/models/{name}/sessions/{id}:step
  GET    /v1/models/{name}/sessions/{id}/snapshot
  DELETE /v1/models/{name}/sessions/{id}
"""

import json
from typing import Dict

import ray
from ray import serve
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

from .codec import (JSON, NPZ, RequestError, check_feeds, feeds_from_body,
                    json_outputs, load_npz, npz_bytes)
from .generation import check_sampling
from .sessions import SessionGoneError

app = FastAPI(title="seqrt.serve")

# A replica that died under a call: a stateless run tries another.
_REPLICA_GONE = (ray.exceptions.RayActorError,
                 ray.exceptions.ActorUnavailableError)
_RUN_ATTEMPTS = 3
# How many requests shared the model run that answered this one.
BATCH_HEADER = "x-seqrt-batched-requests"


@app.exception_handler(RequestError)
async def _refuse(request: Request, error: RequestError):
    return JSONResponse({"error": str(error)}, status_code=error.status)


def _unwrapped(error: Exception) -> Exception:
    """The replica's own exception, not Ray's wrapper (whose text is the
    remote traceback)."""
    cause = getattr(error, "cause", None)
    return cause if isinstance(cause, RequestError) else error


def describe_json(description: dict) -> dict:
    return {
        "name": description["name"],
        "inputs": [{"name": spec.name, "dtype": str(spec.dtype),
                    "shape": spec.shape}
                   for spec in description["inputs"].values()],
        "outputs": description["outputs"],
        "state_inputs": description["state_inputs"],
        "batch_dim": description["batch_dim"],
        "generates": description["generates"],
    }


async def _events(first, tokens):
    """Server-sent events: one per character, then [DONE] (or an error)."""
    try:
        if first is not None:
            yield f"data: {json.dumps({'token': first})}\n\n"
            async for token in tokens:
                yield f"data: {json.dumps({'token': token})}\n\n"
        yield "data: [DONE]\n\n"
    except Exception as error:  # headers are sent: say it in the stream
        message = str(_unwrapped(error))
        yield f"event: error\ndata: {json.dumps({'error': message})}\n\n"


# Defined after every name its methods use: serve.ingress pickles the
# class with the module's names as they are at this point.
@serve.ingress(app)
class Ingress:
    def __init__(self, models: Dict[str, object], max_body_bytes: int,
                 max_new_tokens: int):
        self.handles = models
        self.max_body_bytes = max_body_bytes
        self.max_new_tokens = max_new_tokens
        self._descriptions: Dict[str, dict] = {}

    async def _model(self, name: str):
        if name not in self.handles:
            raise RequestError(f"no model '{name}'; this server serves "
                               f"{sorted(self.handles)}", 404)
        if name not in self._descriptions:
            self._descriptions[name] = await self._call(
                self.handles[name].describe.remote)
        return self.handles[name], self._descriptions[name]

    async def _call(self, method, *args, session_id=None, **kwargs):
        """Awaits a replica call; retries a stateless one whose replica
        died, and turns a dead session replica into SessionGoneError."""
        for attempt in range(_RUN_ATTEMPTS):
            try:
                if session_id is None:
                    return await method(*args, **kwargs)
                return await method(*args, session_id=session_id, **kwargs)
            except RequestError as error:
                raise _unwrapped(error) from None
            except _REPLICA_GONE as error:
                if session_id is not None:
                    raise SessionGoneError(
                        f"session '{session_id}' was held by a replica that "
                        f"stopped ({type(error).__name__}); create a session "
                        f"from your last snapshot to go on") from None
                if attempt + 1 == _RUN_ATTEMPTS:
                    raise RequestError(f"the model's replicas failed "
                                       f"{_RUN_ATTEMPTS} times: {error}",
                                       503) from None

    async def _body(self, request: Request) -> bytes:
        length = request.headers.get("content-length")
        if length is not None and length.isdigit() and \
                int(length) > self.max_body_bytes:
            raise self._oversize()
        chunks, size = [], 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > self.max_body_bytes:
                raise self._oversize()
            chunks.append(chunk)
        return b"".join(chunks)

    def _oversize(self) -> RequestError:
        return RequestError(f"the body is larger than this server's limit "
                            f"of {self.max_body_bytes} bytes", 413)

    async def _feeds(self, request: Request, description: dict):
        body = await self._body(request)
        feeds = feeds_from_body(body, request.headers.get("content-type"),
                                description["inputs"],
                                request.query_params.get("input"))
        check_feeds(feeds, description["inputs"],
                    f"model '{description['name']}'")
        return feeds

    @staticmethod
    def _answer(request: Request, outputs) -> Response:
        if NPZ in request.headers.get("accept", ""):
            return Response(npz_bytes(outputs), media_type=NPZ)
        return JSONResponse(json_outputs(outputs))


    @app.get("/v1/models")
    async def list_models(self):
        return {"models": [describe_json((await self._model(name))[1])
                           for name in sorted(self.handles)]}

    @app.get("/v1/models/{name}")
    async def describe(self, name: str):
        return describe_json((await self._model(name))[1])

    @app.post("/v1/models/{name}:run")
    async def run(self, name: str, request: Request):
        handle, description = await self._model(name)
        feeds = await self._feeds(request, description)
        outputs, shared = await self._call(handle.run.remote, feeds)
        answer = self._answer(request, outputs)
        answer.headers[BATCH_HEADER] = str(shared)
        return answer

    @app.post("/v1/models/{name}/sessions", status_code=201)
    async def create_session(self, name: str, request: Request):
        handle, _ = await self._model(name)
        body = await self._body(request)
        state = None
        if body:
            if NPZ not in request.headers.get("content-type", ""):
                raise RequestError(f"a session is created from an empty body "
                                   f"or from a snapshot ({NPZ})", 415)
            state = load_npz(body)
        session_id = await self._call(handle.create_session.remote, state)
        return JSONResponse({"session": session_id}, status_code=201)

    @app.post("/v1/models/{name}/sessions/{session_id}:step")
    async def step(self, name: str, session_id: str, request: Request):
        handle, description = await self._model(name)
        feeds = await self._feeds(request, description)
        outputs = await self._call(handle.step.remote, feeds=feeds,
                                   session_id=session_id)
        return self._answer(request, outputs)

    @app.get("/v1/models/{name}/sessions/{session_id}/snapshot")
    async def snapshot(self, name: str, session_id: str):
        handle, _ = await self._model(name)
        state = await self._call(handle.snapshot.remote,
                                 session_id=session_id)
        return Response(npz_bytes(state), media_type=NPZ)

    @app.delete("/v1/models/{name}/sessions/{session_id}", status_code=204)
    async def close_session(self, name: str, session_id: str):
        handle, _ = await self._model(name)
        await self._call(handle.close_session.remote, session_id=session_id)
        return Response(status_code=204)

    @app.post("/v1/models/{name}:generate")
    async def generate(self, name: str, request: Request):
        handle, description = await self._model(name)
        try:
            query = json.loads(await self._body(request) or b"{}")
        except ValueError as error:
            raise RequestError(f"the body is not JSON: {error}") from None
        if not isinstance(query, dict) or not isinstance(
                query.get("prompt"), str):
            raise RequestError('a generate body is {"prompt": "...", '
                               '"max_tokens": N, "temperature": T, '
                               '"top_k": K, "seed": S}')
        max_tokens = query.get("max_tokens", 64)
        temperature = query.get("temperature", 0.0)
        top_k = query.get("top_k", 0)
        check_sampling(max_tokens, temperature, top_k, self.max_new_tokens)
        tokens = handle.options(stream=True).generate.remote(
            query["prompt"], max_tokens, float(temperature), top_k,
            query.get("seed"))
        try:  # the first token shows a bad prompt as a 4xx, not mid-stream
            first = await tokens.__anext__()
        except StopAsyncIteration:
            first = None
        except RequestError as error:
            raise _unwrapped(error) from None
        return StreamingResponse(_events(first, tokens),
                                 media_type="text/event-stream")
