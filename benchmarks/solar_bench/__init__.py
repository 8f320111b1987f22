"""``solar-bench``: the SOLAR paper's offline experiments on the public :class:`SolarMemory` API.

Modules: ``generators`` (seeded synthetic workloads, byte-identical to the reference's files),
``replay`` (reader for those files), ``workload`` (the data model), ``runner`` (one policy over
one workload), ``experiments`` (the sweeps by name), ``locomo`` (the LoCoMo offline protocol),
``latency``, ``report`` (aggregation and tables), ``plot``, ``cli``.
"""
