"""Helpers the tests share: clocks, vectors, test doubles, data, stores, workers."""
