"""Dynamic batching along a model's batch dim.

A model batches when every input and every output has the same symbolic
first dim (e.g. 'batch') and it has no state pairs: its rows are then
independent, so requests stacked along that dim and split back give each
request what a run of its own would. Requests whose other dims differ
(another sequence length) run in separate groups of the same batch.
"""

from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

Feeds = Dict[str, np.ndarray]
Outputs = Dict[str, np.ndarray]


def batch_dim(session) -> Optional[str]:
    """The name of the model's batch dim, or None when it has none."""
    if session.state_pairs:
        return None
    args = list(session.get_inputs()) + list(session.get_outputs())
    firsts = {arg.shape[0] if arg.shape else None for arg in args}
    if len(firsts) != 1:
        return None
    (first,) = firsts
    return first if isinstance(first, str) else None


def group_key(feeds: Feeds) -> Tuple:
    """Requests with equal keys stack along dim 0."""
    return tuple(sorted((name, array.dtype.str, array.shape[1:])
                        for name, array in feeds.items()))


def run_batched(run, requests: Sequence[Feeds]) -> List[Tuple[object, int]]:
    """Runs `requests` through `run(feeds) -> Outputs` in as few calls as
    their shapes allow. Returns, per request, its Outputs or the exception
    its own run raised, with the number of requests that shared the run. A
    group that fails runs again one request at a time, so one bad request
    does not fail the others."""
    results: List[Tuple[object, int]] = [(None, 1)] * len(requests)
    groups: Dict[Tuple, List[int]] = {}
    for index, feeds in enumerate(requests):
        if not _stackable(feeds):
            groups[("alone", index)] = [index]
        else:
            groups.setdefault(group_key(feeds), []).append(index)
    for members in groups.values():
        if len(members) > 1:
            try:
                outputs = run(_stack([requests[i] for i in members]))
                rows = [requests[i][next(iter(requests[i]))].shape[0]
                        for i in members]
                for index, part in zip(members, _split(outputs, rows)):
                    results[index] = (part, len(members))
                continue
            except Exception:  # find the request(s) at fault, one by one
                pass
        for index in members:
            try:
                results[index] = (run(requests[index]), 1)
            except Exception as error:
                results[index] = (error, 1)
    return results


def _stackable(feeds: Feeds) -> bool:
    """Every input has a dim 0, all of one size (else its rows are not
    the model's batch rows, and the run alone says what is wrong)."""
    if any(array.ndim == 0 for array in feeds.values()):
        return False
    return len({array.shape[0] for array in feeds.values()}) == 1


def _stack(group: Sequence[Feeds]) -> Feeds:
    return {name: np.concatenate([feeds[name] for feeds in group], axis=0)
            for name in group[0]}


def _split(outputs: Outputs, rows: Sequence[int]) -> List[Outputs]:
    bounds = np.cumsum(rows)[:-1]
    parts: List[Outputs] = [{} for _ in rows]
    for name, array in outputs.items():
        for part, piece in zip(parts, np.split(array, bounds, axis=0)):
            part[name] = piece
    return parts
