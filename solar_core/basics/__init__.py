"""The lowest layer: the values every other layer shares and checks (hits, records, argument
checks, explicit state, lazy imports); it imports nothing else of ``solar_core``."""
