"""The response cache's public path; it lives in :mod:`solar_core.engine.response_cache`.

>>> from solar_core.response_cache import ResponseCache
>>> ResponseCache.__module__
'solar_core.engine.response_cache'
"""

from solar_core.engine.response_cache import Resolution, ResponseCache, exact_key, normalise

__all__ = ["Resolution", "ResponseCache", "exact_key", "normalise"]
