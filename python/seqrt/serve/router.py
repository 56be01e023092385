"""Session affinity for Ray Serve (its RequestRouter API, alpha in Ray 2.x).

A call that names a session (the keyword `session_id`) goes to the replica
whose id starts the session's id. When that replica is gone, it goes to any
replica, which answers SessionGoneError (410). Calls without a session go to
the less loaded of two random replicas, as Ray's default router does.
"""

import random
from typing import List, Optional

from ray.serve.request_router import (FIFOMixin, PendingRequest,
                                      RequestRouter, RunningReplica)

from .sessions import owner_of


class SessionAffinityRouter(FIFOMixin, RequestRouter):
    async def choose_replicas(
        self,
        candidate_replicas: List[RunningReplica],
        pending_request: Optional[PendingRequest] = None,
    ) -> List[List[RunningReplica]]:
        session_id = None
        if pending_request is not None:
            session_id = pending_request.kwargs.get("session_id")
        if session_id:
            owner = owner_of(session_id)
            for replica in candidate_replicas:
                if replica.replica_id.unique_id == owner:
                    return [[replica]]
        # Two at random, in random order: of these Ray takes the shorter
        # queue, and on a tie the first.
        return [random.sample(candidate_replicas,
                              min(2, len(candidate_replicas)))]
