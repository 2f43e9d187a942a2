"""The proxy modes: the dispatcher that applies the current mode to a request, and the modes themselves."""
