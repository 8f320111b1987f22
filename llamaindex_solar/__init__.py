"""LlamaIndex adapters for SOLAR agent memory.

Empty until the LlamaIndex adapter lands (chat memory, memory block, retriever). Install with the
``llamaindex`` extra.
"""
