"""The memory itself: :class:`~solar_core.engine.core.MemoryCore` applies checked steps
(:mod:`.steps`) to the item table and the policies; :class:`~solar_core.SolarMemory`
(:mod:`.memory`) is its thread-safe facade with events, views, copies and async calls;
the lifecycle (:mod:`.lifecycle`), scoped memories and the response cache sit beside it.
"""
