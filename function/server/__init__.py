"""The edges: the command line, the gRPC servicer, the worker processes, one call end to end."""
