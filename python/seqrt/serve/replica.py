"""One replica of a served model: the compiled seqrt.Session, its decode
sessions and its batch queue. Ray Serve runs several of these
(deployments.py); the ingress (ingress.py) calls them by handle."""

import asyncio
from typing import Dict, Optional, Tuple

import numpy as np
from ray import serve

import seqrt

from .batching import batch_dim, run_batched
from .codec import RequestError, input_specs
from .generation import CharVocabulary, generate
from .sessions import SessionTable

# seqrt's errors that are the request's fault: HTTP 4xx, seqrt's message.
_CLIENT_ERRORS = {seqrt.InvalidArgumentError: 400, seqrt.NotFoundError: 400,
                  seqrt.UnsupportedError: 400, seqrt.LimitExceededError: 413,
                  seqrt.DeadlineExceededError: 504}


def request_error(error: Exception) -> RequestError:
    """A seqrt (or NumPy) error as a RequestError a client can read."""
    if isinstance(error, RequestError):
        return error
    for kind, status in _CLIENT_ERRORS.items():
        if isinstance(error, kind):
            return RequestError(str(error), status)
    if isinstance(error, (TypeError, ValueError)):
        return RequestError(str(error), 400)
    return RequestError(f"{type(error).__name__}: {error}", 500)


class ModelReplica:
    def __init__(self, path: str, name: str, backend, num_threads: int,
                 batching: dict, max_sessions: int,
                 session_idle_timeout_s: float, max_new_tokens: int):
        self.name = name
        self.session = seqrt.Session(path, backend=backend,
                                     num_threads=num_threads)
        self.state_inputs = [pair[0] for pair in self.session.state_pairs]
        self.outputs = [arg.name for arg in self.session.get_outputs()
                        if arg.name not in
                        {pair[1] for pair in self.session.state_pairs}]
        self.batch_dim = batch_dim(self.session)
        self.batching = bool(batching.get("enabled")) and \
            self.batch_dim is not None
        self._run_in_batches.set_max_batch_size(batching["max_batch_size"])
        self._run_in_batches.set_batch_wait_timeout_s(
            batching["wait_timeout_s"])
        replica_id = serve.get_replica_context().replica_id.unique_id
        self.sessions = SessionTable(replica_id, max_sessions,
                                     session_idle_timeout_s)
        self.vocabulary = CharVocabulary.of(self.session)
        self.max_new_tokens = max_new_tokens

    def describe(self) -> dict:
        """What the ingress checks requests against."""
        return {
            "name": self.name,
            "inputs": input_specs(self.session, skip=self.state_inputs),
            "outputs": self.outputs,
            "state_inputs": self.state_inputs,
            "batch_dim": self.batch_dim if self.batching else None,
            "generates": self.vocabulary is not None,
        }

    def replica_id(self) -> str:
        return self.sessions.owner

    # Stateless runs.
    async def run(self, feeds: Dict[str, np.ndarray]) -> Tuple[dict, int]:
        """The outputs, and how many requests shared their run."""
        if self.batching:
            result, shared = await self._run_in_batches(feeds)
        else:
            result, shared = await asyncio.to_thread(self._run_caught, feeds)
        if isinstance(result, Exception):
            raise request_error(result)
        return result, shared

    # Two batches in flight: one gathers (or runs) while the other runs.
    @serve.batch(max_batch_size=8, batch_wait_timeout_s=0.005,
                 max_concurrent_batches=2)
    async def _run_in_batches(self, requests):
        return await asyncio.to_thread(run_batched, self._run_one, requests)

    def _run_one(self, feeds) -> dict:
        return dict(zip(self.outputs, self.session.run(self.outputs, feeds)))

    def _run_caught(self, feeds):
        try:
            return self._run_one(feeds), 1
        except Exception as error:
            return error, 1

    # Decode sessions: the keyword session_id routes the call (router.py).
    def create_session(self,
                       state: Optional[Dict[str, np.ndarray]] = None) -> str:
        if not self.state_inputs:
            raise RequestError(f"model '{self.name}' has no state pairs, so "
                               f"it has no decode sessions; use :run")
        stream = seqrt.Stream(self.session)
        if state is not None:
            try:
                stream.restore(seqrt.StreamSnapshot.from_arrays(state))
            except Exception as error:
                raise request_error(error) from None
        return self.sessions.add(stream)

    async def step(self, session_id: str, feeds: Dict[str, np.ndarray]):
        stream = self.sessions.get(session_id)
        try:
            arrays = await asyncio.to_thread(stream.step, feeds, self.outputs)
        except Exception as error:
            raise request_error(error) from None
        return dict(zip(self.outputs, arrays))

    async def snapshot(self, session_id: str) -> Dict[str, np.ndarray]:
        stream = self.sessions.get(session_id)
        snapshot = await asyncio.to_thread(stream.snapshot)
        return snapshot.arrays()

    def close_session(self, session_id: str) -> None:
        self.sessions.close(session_id)

    # Text generation: a stream of characters, on this replica throughout.
    async def generate(self, prompt: str, max_tokens: int,
                       temperature: float, top_k: int, seed: Optional[int]):
        if self.vocabulary is None:
            raise RequestError(f"model '{self.name}' has no vocabulary in "
                               f"its metadata, so it cannot generate text")
        input_name = next(iter(input_specs(self.session,
                                           skip=self.state_inputs)))
        stream = seqrt.Stream(self.session)
        tokens = generate(stream, self.vocabulary, input_name,
                          self.outputs[0], prompt, max_tokens, temperature,
                          top_k, seed)
        while True:
            try:
                token = await asyncio.to_thread(next, tokens, None)
            except Exception as error:
                raise request_error(error) from None
            if token is None:
                return
            yield token
