"""Live sessions: status inference from the logs alone (:mod:`~agentlog.live.status`),
agent process liveness from ``/proc`` (:mod:`~agentlog.live.procs`) and the file
watcher that wakes the live surfaces (:mod:`~agentlog.live.watch`)."""
