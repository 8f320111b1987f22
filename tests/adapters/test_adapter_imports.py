"""Each adapter needs only its own framework: run in a fresh interpreter where some framework
packages are not importable (a ``sys.meta_path`` finder refuses them, as if not installed)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import textwrap

import pytest

# Installed first in the child: any import of a blocked package (or one of its submodules) fails
# as it does when the distribution is not installed.
BLOCKER = """
import sys
from importlib.abc import MetaPathFinder

BLOCKED = set(sys.argv[1].split(","))


class NotInstalled(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, NotInstalled())
"""

# A helper the child scripts use: what accessing ``name`` gives, as one line.
EXPECT_MISSING = """
def missing(module, name):
    try:
        getattr(module, name)
    except ImportError as exc:
        assert isinstance(exc, ModuleNotFoundError), type(exc)
        return str(exc)
    raise AssertionError(f"{name} imported although its framework is missing")
"""


def run_without(blocked: list[str], script: str) -> str:
    """Run ``script`` in a new interpreter where ``blocked`` cannot be imported; its stdout. It
    runs outside the checkout, so it imports the installed packages."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OPENBLAS_NUM_THREADS": "1"}
    code = BLOCKER + EXPECT_MISSING + textwrap.dedent(script)
    done = subprocess.run(
        [sys.executable, "-c", code, ",".join(blocked)],
        capture_output=True,
        text=True,
        cwd=tempfile.gettempdir(),
        env=env,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_middleware_and_retriever_need_no_langchain_classic() -> None:
    pytest.importorskip("langchain")
    out = run_without(
        ["langchain_classic"],
        """
        import langchain_solar
        from langchain.agents import create_agent
        from langchain_core.language_models.fake_chat_models import FakeListChatModel
        from langchain_solar import SolarMemoryMiddleware, SolarRetriever

        middleware = SolarMemoryMiddleware(embedder="hash", shared=True)
        SolarMemoryMiddleware(embedder="hash", scope="user_id")
        agent = create_agent(FakeListChatModel(responses=["Noted."]), middleware=[middleware])
        agent.invoke({"messages": [("user", "my dog is called Rex")]})
        retriever = SolarRetriever(embedder="hash", k=1)
        retriever.add_texts(["retry HTTP 429 with backoff"])
        print("recalled:", retriever.invoke("HTTP 429")[0].page_content)
        print("stored:", len(middleware.memory_for()))
        print("classic:", missing(langchain_solar, "SolarConversationMemory"))
        try:
            from langchain_solar import SolarConversationMemory  # noqa: F401
        except ImportError as exc:
            print("from-import:", exc)
        """,
    )
    assert "recalled: retry HTTP 429 with backoff" in out
    assert "stored: 1" in out
    needs = "SolarConversationMemory needs langchain-classic: pip install 'solar-memory[langchain]'"
    assert f"classic: {needs}" in out and f"from-import: {needs}" in out


def test_without_langchain_v1_only_the_middleware_is_missing() -> None:
    pytest.importorskip("langchain_core")
    out = run_without(
        ["langchain"],
        """
        import langchain_solar
        from langchain_core.embeddings import DeterministicFakeEmbedding
        from langchain_core.language_models import FakeListChatModel
        from langchain_solar import LangChainEmbedder, LLMJudge, SolarRetriever, SolarSemanticCache

        SolarRetriever(embedder="hash").add_texts(["a fact"])
        SolarSemanticCache(embedder="hash")
        LLMJudge(FakeListChatModel(responses=["yes"]))
        LangChainEmbedder(DeterministicFakeEmbedding(size=8))
        for name in ("SolarMemoryMiddleware", "SolarMemoryState"):
            print(missing(langchain_solar, name))
        """,
    )
    assert out.splitlines() == [
        f"{name} needs langchain: pip install 'solar-memory[langchain]' "
        "(No module named 'langchain')"
        for name in ("SolarMemoryMiddleware", "SolarMemoryState")
    ]


def test_without_any_langchain_package_the_package_imports_and_names_the_extra() -> None:
    out = run_without(
        ["langchain", "langchain_core", "langchain_classic", "langgraph"],
        """
        import langchain_solar

        for name in langchain_solar.__all__:
            print(name, "->", missing(langchain_solar, name))
        assert set(langchain_solar.__all__) <= set(dir(langchain_solar))
        try:
            langchain_solar.NoSuchAdapter
        except AttributeError as exc:
            print("unknown ->", exc)
        """,
    )
    # each names the first framework package its module imports: what it needs beyond the core
    needs = {
        "LLMJudge": "langchain-core",
        "LangChainEmbedder": "langchain-core",
        "SolarConversationMemory": "langchain-classic",
        "SolarMemoryMiddleware": "langchain",
        "SolarMemoryState": "langchain",
        "SolarRetriever": "langchain-core",
        "SearchResults": "langgraph",
        "SolarSemanticCache": "langchain-core",
        "SolarStore": "langgraph",
    }
    module = {"langchain-core": "langchain_core", "langchain-classic": "langchain_classic"}
    assert out.splitlines() == [
        f"{name} -> {name} needs {package}: pip install 'solar-memory[langchain]' "
        f"(No module named '{module.get(package, package)}')"
        for name, package in needs.items()
    ] + ["unknown -> module 'langchain_solar' has no attribute 'NoSuchAdapter'"]


def test_without_llama_index_the_package_imports_and_names_the_extra() -> None:
    out = run_without(
        ["llama_index"],
        """
        import llamaindex_solar

        for name in llamaindex_solar.__all__:
            print(missing(llamaindex_solar, name))
        try:
            from llamaindex_solar import SolarChatMemory  # noqa: F401
        except ImportError as exc:
            print(exc)
        """,
    )
    names = ["LLMJudge", "LlamaIndexEmbedder", "SolarChatMemory", "SolarMemoryBlock"]
    names += ["SolarRetriever", "SolarChatMemory"]
    assert out.splitlines() == [
        f"{name} needs llama-index-core: pip install 'solar-memory[llamaindex]' "
        "(No module named 'llama_index')"
        for name in names
    ]


def test_the_adapters_still_import_eagerly_named() -> None:
    """In this process (every framework installed) the lazy names are the classes themselves."""
    pytest.importorskip("langchain_classic")
    pytest.importorskip("llama_index.core")
    import langchain_solar
    import llamaindex_solar
    from langchain_solar.conversation_memory import SolarConversationMemory
    from llamaindex_solar.memory_block import SolarMemoryBlock

    assert langchain_solar.SolarConversationMemory is SolarConversationMemory
    assert llamaindex_solar.SolarMemoryBlock is SolarMemoryBlock
    for package in (langchain_solar, llamaindex_solar):
        assert all(getattr(package, name) is not None for name in package.__all__)
