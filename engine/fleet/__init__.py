"""One worker's view of the state the fleet shares (simulation, configuration, data sources) and how it
stays current; the instance's metrics.
"""
