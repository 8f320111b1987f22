"""Where items live (:mod:`.item_table` with its :mod:`.neighbours` and :mod:`.lexical`
indexes) and how a query finds them (:mod:`.ranking`, :mod:`.filters`)."""
