"""Where items live and how a query finds them.

:class:`~solar_core.retrieval.item_table.ItemTable` holds the items' vectors by slot with its
neighbour index (:mod:`.neighbours`) and keyword index (:mod:`.lexical`);
:mod:`.ranking` is the one place a query's hits are ranked (cosine, BM25 fusion, importance
weights, exclusions, the relevance floor); :mod:`.filters` matches metadata filters.
"""
