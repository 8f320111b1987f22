"""What the framework adapters share, kept apart from the memory itself: parameter models (the
only use of pydantic), all-or-nothing batch adds, recording the hits a prompt showed, and the
text of a dialogue turn. The core never imports this package; ``langchain_solar`` and
``llamaindex_solar`` do."""
