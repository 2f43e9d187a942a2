"""The process: the command line and its settings, serving (workers, listeners, the fleet, an
embedded redis-server), logging, and the assembly of one worker (``worker.build_worker``)."""
