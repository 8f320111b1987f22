"""LangChain adapters for SOLAR agent memory.

Empty until the LangChain adapter lands (retriever, window-memory drop-in, v1 agent middleware).
Install with the ``langchain`` extra.
"""
