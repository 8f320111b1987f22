"""Text to unit vectors: the static (default), MiniLM and hash embedders, a cache, resolution."""
