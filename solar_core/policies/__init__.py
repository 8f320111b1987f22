"""Admission, eviction and deletion policies, what they learn with, and the named presets
that combine them. Policies see the item table, never the memory that drives them."""
