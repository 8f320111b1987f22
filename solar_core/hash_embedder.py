"""The hash embedder's public path; it lives in :mod:`solar_core.embedders.hash_embedder`.

>>> from solar_core.hash_embedder import HashEmbedder
>>> HashEmbedder(dim=8).embed(["a text"]).shape
(1, 8)
"""

from solar_core.embedders.hash_embedder import HashEmbedder

__all__ = ["HashEmbedder"]
