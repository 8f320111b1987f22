""":class:`SolarMemory`'s public path; it lives in :mod:`solar_core.engine.memory`.

>>> from solar_core.memory import SolarMemory
>>> SolarMemory.__module__
'solar_core.engine.memory'
"""

from solar_core.engine.memory import SolarMemory

__all__ = ["SolarMemory"]
