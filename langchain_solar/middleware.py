"""``SolarMemoryMiddleware``: SOLAR memory for LangChain v1 ``create_agent`` agents."""

from __future__ import annotations

import dataclasses
import json
import os
import threading
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, NoReturn, SupportsIndex

from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, ModelResponse
from langchain.tools import ToolRuntime
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, SystemMessage
from langchain_core.tools import BaseTool, tool
from langgraph.config import get_config
from langgraph.runtime import Runtime
from typing_extensions import NotRequired

from solar_core import CHAT_POLICY, Decision, Hit, Hits, SolarMemory
from solar_core.engine.async_calls import in_worker
from solar_core.integrations.copies import refused_copy
from solar_core.integrations.params import (
    build_params,
    check_not_both,
    extract_params,
    extraction_of,
)
from solar_core.integrations.sessions import Sessions
from solar_core.integrations.turns import (
    DEFAULT_MAX_RECALL_CHARS,
    HEADER,
    HUMAN,
    check_recall_budget,
    cut,
    fitting,
    render,
    turn_metadata,
    turn_text,
)
from solar_core.persistence import DEFAULT_CAPACITY, MemoryStore, Scope
from solar_core.persistence.scope import check_part_name
from solar_core.retrieval.filters import Filter, check_filter
from solar_core.retrieval.ranking import DEFAULT_RETRIEVAL

from ._params import SolarChatParams
from .embeddings import to_embedder

#: the scope part a ``scope=`` key names in a ``MemoryStore`` (any other key names a session)
STORE_PARTS = {
    "user_id": "user",
    "user": "user",
    "org_id": "org",
    "org": "org",
    "project_id": "project",
    "project": "project",
}
#: the memory of an unscoped middleware in a ``MemoryStore``: a scope of two parts, which no
#: scope value can name (a scoped middleware's are one part each, e.g. ``session=default``)
DEFAULT_SCOPE = Scope(project="langchain_solar", session="default")


class SolarMemoryState(AgentState[Any]):
    """The agent state keys the middleware adds (all per invoke, none sent to the model)."""

    solar_memories: NotRequired[str]
    """The recalled experiences, rendered for the system message ("" when none)."""
    solar_retrieval: NotRequired[int | None]
    """The id of this invoke's retrieval, for feedback: a
    :class:`~solar_core.basics.types.RetrievalId`
    (an ``int`` that remembers its scope's memory) until the state is serialised."""
    solar_scope: NotRequired[str]
    """Whose memory this invoke used."""
    solar_turns: NotRequired[list[str]]
    """Ids of the turns this thread recorded: never recalled while still in ``messages``."""


class SolarMemoryMiddleware(AgentMiddleware[SolarMemoryState, Any, Any]):
    """Gives a ``create_agent`` agent a small, self-curating memory of its past turns.

    Per invoke: ``before_agent`` retrieves the ``top_k`` past experiences most similar to the
    user's last message (once, however many model calls the tool loop makes); every model call
    sees them appended to its system message (``wrap_model_call`` / ``awrap_model_call``), and
    nothing is written into ``messages``; ``after_agent`` offers the finished turn (the user's
    message and the final answer) to SOLAR, which decides whether to store it and what to evict.

    Feedback: ``middleware.feedback(like=..., scope=...)`` rates the last invoke's memories, e.g.
    from a thumbs-up button. With ``feedback_tool=True`` the agent also gets a ``rate_memories``
    tool to report, during the turn, whether the recalled experiences helped; with a
    regret-gated policy (``solar``, ``solar-a``) a rating given before the turn ends also drives
    the admission gate (a bad turn is more likely stored).

    Scopes: ``scope="user_id"`` keeps one memory per value of ``user_id``, read from the run's
    context (``create_agent(context_schema=...)``, ``invoke(..., context=...)``) or else from
    ``config["configurable"]`` (e.g. ``scope="thread_id"``). A run without that key is refused,
    so two users never share memories, and so is a call of :meth:`feedback`, :meth:`recalled`,
    :meth:`last_decision`, :meth:`memory_for` or :meth:`forget` without ``scope=`` (the error
    says how to pass it). One memory for every run and every user is a choice you make:
    ``shared=True`` (or ``memory=``, one memory you built); a middleware with neither ``scope=``
    nor that choice is refused when built, as it would let one user's turns reach another's
    prompt.

    Persistence: with ``store=`` every memory lives in a
    :class:`~solar_core.persistence.MemoryStore` (a SQLite file, or PostgreSQL), every step is
    logged, and a middleware opened later on the same database -- in another process, after a
    restart -- continues each memory exactly where it stopped. ``scope="user_id"`` (or
    ``"user"``) keys the store's ``user`` scopes, ``"org_id"``/``"org"`` its ``org`` scopes,
    ``"project_id"``/``"project"`` its ``project`` scopes, any other key (``"thread_id"``,
    ``"session_id"``) its ``session`` scopes; with ``shared=True`` every run uses the reserved
    scope :data:`DEFAULT_SCOPE` (``project="langchain_solar", session="default"``: two parts,
    so no scope value -- not even a thread named ``"default"`` -- reaches it). Scope values must
    then be valid store identifiers (no control characters, at most 256 characters): anything
    else fails the run with a ``ValueError``. A store opened from a path is the middleware's:
    :meth:`close` snapshots and closes it; a copy (``copy.copy``) shares it but never owns it.

    Forgetting: what the middleware remembers of a scope's last invoke (:meth:`recalled`,
    :meth:`last_decision`, what :meth:`feedback` rates) belongs to that scope's memory object:
    once the scope is forgotten -- :meth:`forget`, ``store.forget``/``store.erase``, here or in
    another process -- it is gone too, and rating the scope is refused rather than recreating it.

    The chat adapters' common verbs, here of a named scope: :meth:`recalled`,
    :meth:`memory_for`, :meth:`forget` (deletes that scope's memory) and :meth:`close`
    (releases a store the middleware opened; safe to call twice).

    Args:
        memory: a ready :class:`~solar_core.SolarMemory`, the one memory of every run (no
            ``scope``; it may be a persistent one, e.g. ``store.scope(user="alice")``).
        store: a :class:`~solar_core.persistence.MemoryStore` (its settings apply; its owner
            closes it), or a SQLite path / ``postgresql://`` URL to open one with ``policy``,
            ``capacity``, ``embedder``, ``seed`` and ``extractor`` (owned: call
            :meth:`close`).
        policy, capacity, embedder, seed: how to build each memory (``policy=None`` is
            :data:`~solar_core.policies.presets.CHAT_POLICY`, ``solar-dialogue``; ``embedder`` may
            be any LangChain ``Embeddings``; it is loaded once and shared by all scopes).
        retrieval, min_score: how recalls rank and their relevance floor (``"hybrid"`` and
            ``"auto"``: see :mod:`solar_core.retrieval.ranking`).
        top_k: experiences recalled per invoke.
        max_recall_chars: characters of recalled text added to the system message per invoke
            (default 4,000; ``None``: no limit). Experiences are added best first while they
            fit; one that does not fit is left out (a shorter, less relevant one may still fit),
            except the best, which is cut to the budget (ending in "…") rather than dropped.
        filter: recall only the experiences whose metadata match it
        (:mod:`solar_core.retrieval.filters`:
            ``{"topic": "billing"}``, ``{"n": {"$gte": 2}}``, or a predicate of the metadata),
            e.g. in a memory shared with components that store experiences with metadata.
        scope: the context/config key that names whose memory a run uses.
        shared: ``True``: one memory for every run, whoever the user (instead of ``scope``).
        store_part: with ``store``, the scope part ``scope``'s values name (default: ``user``
            for ``user_id``, ``org`` for ``org_id``, ``project`` for ``project_id``, else
            ``session``); any part of your own too, e.g. ``scope="team_id",
            store_part="team"`` keeps ``store.scope(team=...)`` memories.
        feedback_tool: add the ``rate_memories`` tool.
        header: the line introducing the memories in the system message.
        human_prefix, ai_prefix: how a stored turn labels its two sides.
        extractor, extract: a model that reads each finished turn (the text stored for it,
            ``"Human: ...\\nAI: ..."``) and names the lasting facts it states, each with a key
            (``"user/home"``), so that a newer fact supersedes the older one: a LangChain chat
            model or LLM, a LlamaIndex LLM, or a callable (:mod:`solar_core.engine.extraction`).
            Its facts are stored ``"beside"`` the turn (default) or ``"instead"`` of it; a
            failed extraction stores the turn, and :meth:`last_decision` says why. Given to
            every memory the middleware builds, or to the store it opens from a path; refused
            beside ``memory=`` or a ``MemoryStore``, which have their own
            (``SolarMemory(..., extractor=...)``, ``MemoryStore(..., extractor=...)``).

    Example:
        >>> mw = SolarMemoryMiddleware(embedder="hash", seed=0, scope="user_id")
        >>> mw.memory_for("alice") is mw.memory_for("bob")
        False
        >>> SolarMemoryMiddleware(embedder="hash")
        Traceback (most recent call last):
        ...
        ValueError: SolarMemoryMiddleware needs to know whose memory a run uses: pass scope=...
        >>> SolarMemoryMiddleware(embedder="hash", shared=True).shared   # one memory for all
        True

        Persistent, one memory per user in a SQLite file, reopened by a new middleware:

        >>> import os, tempfile
        >>> tmp = tempfile.TemporaryDirectory()
        >>> path = os.path.join(tmp.name, "agent.db")
        >>> mw = SolarMemoryMiddleware(store=path, scope="user_id", embedder="hash", seed=0)
        >>> _ = mw.memory_for("alice").add("Human: call me Al. AI: Sure, Al.")
        >>> mw.close()
        >>> again = SolarMemoryMiddleware(store=path, scope="user_id", embedder="hash", seed=0)
        >>> again.scopes, [item.text for item in again.memory_for("alice").items()]
        (['alice'], ['Human: call me Al. AI: Sure, Al.'])
        >>> again.store.names()
        ['user=alice']
        >>> again.close(); tmp.cleanup()
    """

    state_schema = SolarMemoryState

    def __init__(
        self,
        memory: SolarMemory | None = None,
        *,
        store: MemoryStore | str | os.PathLike[str] | None = None,
        policy: str | None = None,
        capacity: int | None = DEFAULT_CAPACITY,
        embedder: object = None,
        seed: int | None = None,
        retrieval: str = DEFAULT_RETRIEVAL,
        min_score: float | str | None = "auto",
        top_k: int = 3,
        max_recall_chars: int | None = DEFAULT_MAX_RECALL_CHARS,
        filter: Filter | None = None,
        scope: str | None = None,
        shared: bool = False,
        store_part: str | None = None,
        feedback_tool: bool = False,
        header: str = HEADER,
        human_prefix: str = "Human",
        ai_prefix: str = "AI",
        extractor: object = None,
        extract: str = "beside",
    ) -> None:
        super().__init__()
        if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
            raise ValueError(f"top_k must be a positive int, got {top_k!r}")
        check_recall_budget(max_recall_chars, "invoke")
        if scope is not None and (not isinstance(scope, str) or not scope):
            raise ValueError(f"scope must be a non-empty key name, got {scope!r}")
        if not isinstance(shared, bool):
            raise TypeError(f"shared must be True or False, got {shared!r}")
        if shared and scope is not None:
            raise ValueError(
                "pass scope= (one memory per user) or shared=True (one memory for all), not both"
            )
        if scope is None and not shared and memory is None:
            # One memory for every user by default would put one user's turns in another's
            # prompt: sharing is a choice the caller makes, as SolarChatMemory(store=) asks.
            raise ValueError(
                "SolarMemoryMiddleware needs to know whose memory a run uses: pass "
                'scope="user_id" (one memory per user, read from the run\'s context or '
                'config["configurable"]), or shared=True for one memory shared by every run and '
                "every user"
            )
        if store_part is not None:
            check_part_name(store_part)
            if store is None or scope is None:
                raise ValueError(
                    "store_part= names the store's scope part that scope= keys: pass it with "
                    "store= and scope="
                )
        build = build_params(policy, capacity, embedder, seed, retrieval, min_score)
        build.update(extract_params(extractor, extract))
        if memory is not None:
            if not isinstance(memory, SolarMemory):
                raise TypeError(f"memory must be a SolarMemory, got {type(memory).__name__}")
            if scope is not None:
                raise ValueError("one memory= cannot be split by scope; pass the policy instead")
            if store is not None:
                raise ValueError("pass memory= or store=, not both")
            check_not_both(memory, build)
        extraction = extraction_of(build)  # checked before a store is opened
        self.filter = None if filter is None else check_filter(filter)
        self.top_k, self.scope, self.header = top_k, scope, header
        #: characters of recalled text added to the system message per invoke (``None``: all)
        self.max_recall_chars = max_recall_chars
        #: one memory for every run (``shared=True``, or one ``memory=``), not one per scope
        self.shared = scope is None
        self.human_prefix, self.ai_prefix = human_prefix, ai_prefix
        self._lock = threading.Lock()
        # per scope: the memory it was made with, and the last recall / decision
        self._last: dict[str, tuple[SolarMemory, Hits]] = {}
        self._decisions: dict[str, tuple[SolarMemory, Decision]] = {}
        self.tools: list[BaseTool] = [self._rating_tool()] if feedback_tool else []
        self._sessions: Sessions
        if store is not None:  # last: nothing after it can fail and leave an opened store
            opened, owned = SolarChatParams.open_store(store, build)
            part = store_part or ("session" if scope is None else STORE_PARTS.get(scope, "session"))
            self._sessions = Sessions.stored(opened, part, DEFAULT_SCOPE, owns_store=owned)
        elif scope is not None:  # one memory per scope, all sharing one embedder
            self._sessions = Sessions.in_process(
                CHAT_POLICY if policy is None else policy,
                capacity,
                embedder=to_embedder(embedder),
                seed=seed,
                retrieval=retrieval,
                min_score=min_score,
                extraction=extraction,
            )
        else:
            single = memory if memory is not None else SolarChatParams.build_memory(**build)
            self._sessions = Sessions.shared(single)

    # -- memories per scope -------------------------------------------------------------------
    def memory_for(self, scope: str | None = None) -> SolarMemory:
        """The memory of ``scope`` (created empty on first use, or reopened from the store);
        unscoped: the one memory."""
        return self._memory(self._key(scope, "memory_for(scope='alice')"))

    def _memory(self, key: str) -> SolarMemory:
        return self._sessions.get(key)

    def _existing(self, key: str) -> SolarMemory | None:
        """The memory of ``key`` if it exists (never creates one): ``None`` once forgotten, here
        or by another process."""
        return self._sessions.existing(key)

    def _cached(self, table: dict[str, tuple[SolarMemory, Any]], key: str) -> Any:
        """``table``'s entry for ``key`` if it belongs to the scope's current memory; an entry of
        a forgotten memory is dropped."""
        with self._lock:
            entry = table.get(key)
        if entry is None:
            return None
        if self._existing(key) is entry[0]:
            return entry[1]
        with self._lock:
            if table.get(key) is entry:
                del table[key]
        return None

    def forget(self, scope: str | None = None) -> None:
        """Drop ``scope``'s memory (a user deleted their account, a thread ended); unscoped: empty
        the one memory. With a store, the scope's rows are deleted from the database."""
        key = self._key(scope, "forget(scope='alice')")
        with self._lock:
            self._last.pop(key, None)
            self._decisions.pop(key, None)
        self._sessions.forget(key)

    @property
    def scopes(self) -> list[str]:
        """The scopes that have a memory so far (with a store: every one it holds for this
        middleware's scope part, including those of earlier processes)."""
        if self.scope is None:
            return []
        return self._sessions.names()

    @property
    def store(self) -> MemoryStore | None:
        """The :class:`~solar_core.persistence.MemoryStore` holding the memories, if any."""
        return self._sessions.store

    def close(self) -> None:
        """Snapshot and close the store this middleware opened from a path (a no-op otherwise:
        a ``MemoryStore`` passed in is its owner's to close; safe to call twice). Its memories
        stop working."""
        self._sessions.close()

    def __copy__(self) -> SolarMemoryMiddleware:
        """A shallow copy shares the store but never owns it: closing the copy leaves it open."""
        twin = type(self).__new__(type(self))
        twin.__dict__.update(self.__dict__)
        twin._sessions = self._sessions.unowned()
        return twin

    def __deepcopy__(self, memo: dict[int, Any] | None = None) -> NoReturn:
        raise refused_copy(self, "copy.deepcopy()")

    def __reduce_ex__(self, protocol: SupportsIndex) -> NoReturn:
        raise refused_copy(self, "pickling")

    def _key(self, scope: object, call: str = "") -> str:
        """``scope`` as a memory key; ``call``: how to call the method with one, for the error
        of a scoped middleware called without (the usual slip: ``feedback(like=True)``)."""
        if self.scope is None:
            if scope not in (None, ""):
                raise ValueError("this middleware has no scope= key; call without scope")
            return ""
        if scope is None and call:
            raise ValueError(
                f"this middleware keeps one memory per {self.scope!r}: pass scope=, e.g. {call}"
            )
        return self._sessions.check(scope)

    def _scope_of_run(self, runtime: Runtime[Any]) -> str:
        """The run's scope value: from its context, else its ``config["configurable"]``."""
        if self.scope is None:
            return ""
        context = runtime.context
        if isinstance(context, Mapping):
            value = context.get(self.scope)
        else:
            value = getattr(context, self.scope, None)
        if value is None:
            value = get_config().get("configurable", {}).get(self.scope)
        if value is None:
            raise ValueError(
                f"SolarMemoryMiddleware keeps one memory per {self.scope!r}, but this run has no "
                f"{self.scope!r} in its context or config['configurable']; pass one so users "
                "never share memories"
            )
        return self._key(value)

    # -- the turn -----------------------------------------------------------------------------
    def before_agent(self, state: SolarMemoryState, runtime: Runtime[Any]) -> dict[str, Any]:
        return self._recall(state, self._scope_of_run(runtime))

    async def abefore_agent(self, state: SolarMemoryState, runtime: Runtime[Any]) -> dict[str, Any]:
        scope = self._scope_of_run(runtime)  # here: the run's config lives in this context
        return await in_worker(self._recall, state, scope)

    def _recall(self, state: SolarMemoryState, scope: str) -> dict[str, Any]:
        messages = state["messages"]
        query = _last_human_text(messages)
        memory = self.memory_for(scope)
        hits = Hits([], None)
        if query:
            hits = self._retrieve(memory, query, _in_messages(memory, state), record=True)
        with self._lock:  # feedback() now rates this invoke's recall, never an older one
            self._last[scope] = (memory, hits)
        text = render(self._fit(hits), self.header)
        # a RetrievalId: an int that remembers its memory, so feedback() for another scope
        # refuses it (after a checkpoint round trip it is a plain int, taken as the scope's)
        return {"solar_memories": text, "solar_retrieval": hits.handle, "solar_scope": scope}

    def _retrieve(
        self, memory: SolarMemory, query: str, exclude: list[str], *, record: bool
    ) -> Hits:
        """The recall for ``query`` (``record=False``: a look), narrowed to the experiences the
        budget admits (uncut), with the retrieval's id."""
        hits = memory.retrieve(
            query, k=self.top_k, exclude=exclude, filter=self.filter, record=record
        )
        shown = fitting([len(hit.text) for hit in hits], self.max_recall_chars)
        return Hits([hits[i] for i in shown], hits.retrieval_id, hits.origin)

    def _fit(self, hits: Hits) -> list[Hit]:
        """``hits`` as the system message shows them: the best cut to ``max_recall_chars`` if
        it alone is longer (the others were left out by :meth:`_retrieve`)."""
        budget = self.max_recall_chars
        if not hits or budget is None or len(hits[0].text) <= budget:
            return hits
        return [dataclasses.replace(hits[0], text=cut(hits[0].text, budget)), *hits[1:]]

    def look(self, query: str, scope: str | None = None) -> Hits:
        """What the next invoke asking ``query`` would recall for ``scope``, best first,
        recording nothing: no retrieval the policy learns from, nothing to rate (its
        ``retrieval_id`` is ``None``). The same ``top_k``, filter, relevance floor and
        ``max_recall_chars`` as an invoke (experiences shown whole here; the system message may
        cut the first to the budget), as a new thread would get it (an invoke also leaves out
        its own thread's turns still in ``messages``). A scope without a memory recalls
        nothing, and a look creates none."""
        key = self._key(scope, "look('my question', scope='alice')")
        if not isinstance(query, str):
            raise TypeError(f"query must be a str, got {type(query).__name__}")
        memory = self._existing(key)
        if memory is None or not query.strip():
            return Hits([], None)
        return self._retrieve(memory, query.strip(), [], record=False)

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any] | AIMessage:
        return handler(self._inject(request))

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any] | AIMessage:
        return await handler(self._inject(request))

    def _inject(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        memories = request.state.get("solar_memories")
        if not memories:
            return request
        system = request.system_message
        if system is None:
            content: Any = memories
        elif isinstance(system.content, str):
            content = f"{system.content}\n\n{memories}" if system.content else memories
        else:  # content blocks: add ours as one more text block
            content = [*system.content, {"type": "text", "text": memories}]
        return request.override(system_message=SystemMessage(content=content))

    def after_agent(self, state: SolarMemoryState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        return self._record(state)

    async def aafter_agent(
        self, state: SolarMemoryState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        return await in_worker(self._record, state)

    def _record(self, state: SolarMemoryState) -> dict[str, Any] | None:
        human = _last_human_text(state["messages"])
        answer = _final_answer(state)
        if not human or not answer:
            return None  # no finished turn (interrupted, or nothing was answered)
        scope = state.get("solar_scope", "")
        memory = self.memory_for(scope)
        text = turn_text(human, answer, self.human_prefix, self.ai_prefix)
        decision = memory.add(text, metadata=turn_metadata(human, answer))
        with self._lock:
            self._decisions[scope] = (memory, decision)
        turns = [i for i in state.get("solar_turns", []) if i in memory]  # forget evicted ones
        if decision.item_id is not None and _is_turn(memory, decision.item_id, text):
            turns.append(decision.item_id)
        return {"solar_turns": turns}

    # -- feedback -----------------------------------------------------------------------------
    def feedback(
        self,
        *,
        like: bool | None = None,
        score: float | None = None,
        scope: str | None = None,
        recall: Hits | int | None = None,
        retrieval: Hits | int | None = None,
    ) -> None:
        """Rate the memories recalled for an invoke of ``scope``: ``like`` or ``score`` in [0, 1].

        They are credited as the memory's policy does it (the default ``solar-dialogue``: a
        rating above the memory's usual one raises their value, one below lowers it, and uniform
        ratings move nothing; ``solar-adaptive``: a dislike takes from the best of them the
        value it earned for that input; the paper's ``solar``: Thompson posteriors,
        ``alpha += 1`` on a like, ``beta += 1`` on a dislike), so
        experiences that help outlive those that do not.

        ``recall``: which invoke to rate, by default the scope's latest -- what
        :meth:`recalled` returned after it (a ``Hits``), or its retrieval id, e.g.
        ``result["solar_retrieval"]`` from the invoke's output state: for a rating that
        arrives after the next question, or runs of one scope that overlap. Any of the
        memory's last 1,000 recalls, once each; one unknown, expired or rated already is
        refused by the memory with a ``ValueError``, and nothing changes. ``retrieval=`` is
        the same argument under its earlier name.

        A retrieval id is a number per memory (every scope's count starts at 1), so it is
        checked against ``scope``: the invoke's own ``result["solar_retrieval"]`` (a
        :class:`~solar_core.basics.types.RetrievalId`) remembers the memory that made it, and one
        from another scope's run is refused with a ``ValueError``. A plain ``int`` (the id read back
        from a serialised state or a checkpoint) cannot say whose it is: it is taken as
        ``scope``'s retrieval, so pass the scope it was recalled for.

        A scope without a memory (never used, or forgotten) is refused with a ``ValueError``:
        feedback never creates a memory, nor rates a new one with a forgotten user's rating.
        """
        key = self._key(scope, "feedback(like=True, scope='alice')")
        memory = self._existing(key)
        if memory is None:
            raise ValueError(f"nothing to rate: {scope!r} has no memory (never used, or forgotten)")
        if recall is not None and retrieval is not None:
            raise ValueError("pass recall= (or its earlier name retrieval=), not both")
        target: Hits | int | None = retrieval if recall is None else recall
        if target is None:
            target = self._cached(self._last, key)
            if target is None or (isinstance(target, Hits) and target.retrieval_id is None):
                raise ValueError(f"nothing to rate: the last invoke for {scope!r} recalled nothing")
        memory.feedback(like=like, score=score, retrieval=target)

    def recalled(self, scope: str | None = None) -> Hits:
        """What ``scope``'s last invoke recalled (and injected), best first (nothing once the
        scope is forgotten): keep it to rate that invoke later,
        ``feedback(like=..., scope=..., recall=hits)``."""
        key = self._key(scope, "recalled(scope='alice')")
        hits: Hits | None = self._cached(self._last, key)
        return hits if hits is not None else Hits([], None)

    def last_decision(self, scope: str | None = None) -> Decision | None:
        """Why ``scope``'s last finished turn was (or was not) stored (``None`` once the scope
        is forgotten)."""
        key = self._key(scope, "last_decision(scope='alice')")
        decision: Decision | None = self._cached(self._decisions, key)
        return decision

    def _rating_tool(self) -> BaseTool:
        middleware = self

        @tool("rate_memories")
        def rate_memories(helpful: bool, runtime: ToolRuntime[Any, Any]) -> str:
            """Report whether the past experiences recalled from memory for this request helped.

            Call it once you know, e.g. after the user confirms or corrects your answer.
            """
            state = runtime.state
            retrieval = state.get("solar_retrieval")
            if retrieval is None:
                return "No memories were recalled for this request; nothing to rate."
            memory = middleware._existing(state.get("solar_scope", ""))
            if memory is None:
                return "Not recorded: this memory was forgotten meanwhile."
            try:
                memory.feedback(like=helpful, retrieval=retrieval)
            except ValueError as exc:  # already rated, or expired
                return f"Not recorded: {exc}."
            return "Thanks, recorded."

        return rate_memories


def _in_messages(memory: SolarMemory, state: SolarMemoryState) -> list[str]:
    """This thread's recorded turns whose question is still in ``messages`` (a checkpointer keeps
    them): the model sees them already, so recalling them would waste slots and credit them."""
    recorded = state.get("solar_turns")
    if not recorded:
        return []
    asked = {m.text.strip() for m in state["messages"] if isinstance(m, HumanMessage)}
    shown = []
    for item_id in recorded:
        if item_id in memory:
            try:
                if memory.get(item_id).metadata.get(HUMAN) in asked:
                    shown.append(item_id)
            except KeyError:  # evicted meanwhile by another run of this scope
                pass
    return shown


def _is_turn(memory: SolarMemory, item_id: str, text: str) -> bool:
    """Whether the item an offer's decision names is the turn ``text`` (with an extractor in
    ``"instead"`` mode it is the turn's first fact: no turn was stored)."""
    if memory.extraction is None:
        return True
    try:
        return memory.get(item_id).text == text
    except KeyError:  # evicted meanwhile by another run of this scope
        return False


def _final_answer(state: SolarMemoryState) -> str:
    """The run's answer: its structured response if it has one, else the final AI text."""
    structured = state.get("structured_response")
    if structured is not None:
        if hasattr(structured, "model_dump_json"):
            return str(structured.model_dump_json())
        try:
            return json.dumps(structured, default=str, ensure_ascii=False)
        except (TypeError, ValueError):
            return str(structured)
    final = state["messages"][-1] if state["messages"] else None
    if isinstance(final, AIMessage) and not final.tool_calls:
        return final.text.strip()
    return ""


def _last_human_text(messages: list[AnyMessage]) -> str:
    for message in reversed(messages):
        if isinstance(message, HumanMessage):
            return message.text.strip()
    return ""
