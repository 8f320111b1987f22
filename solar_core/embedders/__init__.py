"""Text to unit vectors: the static embedder (the default), MiniLM, the hash embedder (tests),
a cache, and :func:`~solar_core.embedders.embedder.resolve_embedder`."""
