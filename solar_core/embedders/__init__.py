"""Text to unit vectors: the built-in static embedder (numpy only, the default), MiniLM (the
``minilm`` extra), the hash embedder (tests), a caching wrapper, and how a name or object
becomes one (:func:`~solar_core.embedders.embedder.resolve_embedder`). Imports only
:mod:`solar_core.basics`.
"""
