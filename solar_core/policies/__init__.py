"""The decisions: admission (:mod:`.admission`), eviction (:mod:`.eviction`) and deletion
(:mod:`.deletion`) policies, the Beta posterior and the salience model they learn with, and
the named presets that combine them (:mod:`.presets`). Policies see the item table, never
the memory that drives them.
"""
