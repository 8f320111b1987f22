"""The lowest layer: the values every other layer shares and checks.

Items, hits and decisions (:mod:`.types`), a stored item's record and its metadata checks
(:mod:`.records`), argument checks (:mod:`.validation`, :mod:`.arguments`), explicit state --
``params()``, ``state()``, ``load_state()`` and the checked reader behind them
(:mod:`.state`) -- and lazy imports of optional packages (:mod:`.lazy_import`). It imports
nothing else of ``solar_core``.
"""
