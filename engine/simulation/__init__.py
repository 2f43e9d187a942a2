"""The simulation: its domain model, the persisted v5 codec, Hoverfly's import rules, delays and faults."""
