"""The default embedder's bounds: a 1 MB text, crafted long words, a 10 MB text, its cache.

Times :class:`~solar_core.embedders.static_embedder.StaticEmbedder` embedding one text alone (a
fresh embedder each run, so its word cache starts empty; the tables are loaded beforehand), the
keyword index's words of it (CPU time), and ``SolarMemory.add`` of it followed by a query
(embedding, the salience prior, the keyword index), on:

- prose: LoCoMo turns joined and repeated to the size;
- long words: distinct 100-character words of random letters (BERT's longest word; a split that
  tries every end position at every start looks each up thousands of times);
- 18-letter words: distinct words as long as the longest word-initial piece (the most lookups
  the first piece of a word can take);
- accented words: distinct words of accented Latin and Hangul (the character-by-character
  path, which also decomposes each Hangul syllable into two or three letters);
- CJK: Chinese without spaces (every ideograph is a word);
- Hangul and emoji: two-character words of 100 syllables or 100 emoji.

Then the same after a text of 131,072 distinct characters (more than the embedder's table of
characters holds), embedded first with the table emptied before each run, on 1 MB of Hangul and
of emoji: no earlier text may leave later ones to the slow path.

Then streams distinct words through one embedder and reports the most memory its word cache
held (its dictionary, words and tuples of rows, measured with ``sys.getsizeof`` every 2,000 new
words) against the bound it keeps.

    python benchmarks/embed_bound.py --data locomo-dev.json [--repeats 3] [--no-add]
"""

from __future__ import annotations

import argparse
import random
import statistics
import string
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from solar_bench.dialogue import distinct_texts, load_dialogues
from solar_core import SolarMemory
from solar_core.embedders import static_embedder
from solar_core.embedders.static_embedder import StaticEmbedder
from solar_core.retrieval.lexical import words

MB = 1_000_000
_ACCENTED = "àáâäãåèéêëìíîïòóôöõùúûüñç" + "".join(chr(c) for c in range(0xAC00, 0xAC00 + 400))


def prose(texts: Sequence[str], size: int) -> str:
    joined = " ".join(texts)
    return (joined * (size // len(joined) + 1))[:size]


def distinct_words(size: int, length: int, alphabet: str, seed: int) -> str:
    rng = random.Random(seed)
    out: list[str] = []
    total = 0
    while total < size:
        word = "".join(rng.choices(alphabet, k=length))
        out.append(word)
        total += len(word) + 1
    return " ".join(out)[:size]


def cjk(size: int, seed: int) -> str:
    rng = random.Random(seed)
    return "".join(chr(rng.randrange(0x4E00, 0x9FA6)) for _ in range(size // 3))


def hangul(size: int, seed: int) -> str:
    """Two-syllable words of 100 Hangul syllables (10,000 words, each decomposed in letters)."""
    return distinct_words(size, 2, "".join(chr(c) for c in range(0xAC00, 0xAC00 + 100)), seed)


def emoji(size: int, seed: int) -> str:
    """Two-emoji words of 100 emoji."""
    return distinct_words(size, 2, "".join(chr(c) for c in range(0x1F600, 0x1F664)), seed)


#: more distinct characters than the embedder's table of characters holds (its size then and now)
POISON = "".join(chr(code) for code in range(0x20000, 0x20000 + (1 << 17)))


def poison() -> None:
    """Empty the process's table of characters (earlier cases met Hangul and emoji already),
    then embed :data:`POISON`: what a process that met such a text first is left with."""
    static_embedder._BASIC.clear()
    StaticEmbedder().embed([POISON])
    StaticEmbedder._recent = None


def median_seconds(
    run: Callable[[], object], repeats: int, before: Callable[[], object] | None = None
) -> tuple[float, float]:
    """The median wall-clock seconds of ``run`` and the median seconds of this process's CPU
    time (on a busy machine the wall clock counts the other jobs too); ``before`` runs untimed
    before each run."""
    wall, cpu = [], []
    for _ in range(repeats):
        if before is not None:
            before()
        start, start_cpu = time.perf_counter(), time.process_time()
        run()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return statistics.median(wall), statistics.median(cpu)


def embed_once(text: str) -> None:
    StaticEmbedder().embed([text])
    StaticEmbedder._recent = None  # the next run must not reuse the vector


def add_once(text: str) -> None:
    """Add the text to a memory, then query it (the keyword index reads the text's words)."""
    memory = SolarMemory(capacity=5, seed=0)
    memory.add("warm up")
    memory.add(text)
    memory.retrieve("what is the dog called?")
    StaticEmbedder._recent = None


def lookup_ns() -> float:
    """This machine's speed: nanoseconds of CPU time of one slice and dictionary lookup in a
    Python loop (the split's unit of work), to scale the figures by."""
    vocab = {str(i): i for i in range(30_000)}
    word = "abcdefghijklmnopqrstu"
    start = time.process_time()
    for _ in range(50_000):
        for end in range(18, 0, -1):
            vocab.get(word[:end])
    return (time.process_time() - start) / (50_000 * 18) * 1e9


def cache_bytes(embedder: StaticEmbedder) -> int:
    """What the word cache holds: its dictionary, its words and their tuples of rows (the rows
    themselves are the vocabulary's own integers)."""
    cache = embedder._cache
    items = list(cache.items())
    return sys.getsizeof(cache) + sum(sys.getsizeof(w) + sys.getsizeof(i) for w, i in items)


def cache_peak(words: int) -> tuple[int, int]:
    """The most bytes the cache held while ``words`` distinct words went through it, sampled
    every 2,000 words, and the most its own count reached."""
    embedder = StaticEmbedder()
    rng = random.Random(7)
    peak = counted = 0
    for start in range(0, words, 2000):
        batch = [
            "".join(rng.choices(string.ascii_lowercase, k=rng.choice((6, 12, 40, 100))))
            for _ in range(min(2000, words - start))
        ]
        embedder.embed([" ".join(batch)])
        peak = max(peak, cache_bytes(embedder))
        counted = max(counted, embedder._cache_bytes)
    return peak, counted


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--data", type=Path, required=True, help="LoCoMo-format JSON file")
    p.add_argument("--repeats", type=int, default=3, help="runs per case (the median is shown)")
    p.add_argument("--no-add", action="store_true", help="time the embedding only")
    p.add_argument("--cache-words", type=int, default=300_000, help="distinct words streamed")
    args = p.parse_args(argv)
    turns = distinct_texts(load_dialogues(args.data))
    StaticEmbedder().embed(["load the tables"])
    cases = {
        "1 MB prose": prose(turns, MB),
        "1 MB long words": distinct_words(MB, 100, string.ascii_lowercase, 1),
        "1 MB 18-letter words": distinct_words(MB, 18, string.ascii_lowercase, 2),
        "1 MB accented words": distinct_words(MB, 12, _ACCENTED, 3),
        "1 MB CJK": cjk(MB, 4),
        "1 MB Hangul": hangul(MB, 6),
        "1 MB emoji": emoji(MB, 7),
        "10 MB prose": prose(turns, 10 * MB),
        "10 MB long words": distinct_words(10 * MB, 100, string.ascii_lowercase, 5),
    }
    print(f"StaticEmbedder.MAX_CHARS = {StaticEmbedder.MAX_CHARS:,} characters")
    print(f"this machine: {lookup_ns():.0f} ns of CPU a slice and dictionary lookup")
    print(f"median of {args.repeats} runs, seconds: wall clock and this process's CPU time")
    print(f"{'text':<22} {'chars':>11} {'embed':>7} {'cpu':>6} {'words':>6} {'add':>7} {'cpu':>6}")
    for name, text in cases.items():
        embed, embed_cpu = median_seconds(lambda: embed_once(text), args.repeats)  # noqa: B023
        _, keywords = median_seconds(lambda: words(text), args.repeats)  # noqa: B023
        add, add_cpu = (
            (float("nan"), float("nan"))
            if args.no_add
            else median_seconds(lambda: add_once(text), args.repeats)  # noqa: B023
        )
        row = f"{embed:>7.3f} {embed_cpu:>6.3f} {keywords:>6.3f} {add:>7.3f} {add_cpu:>6.3f}"
        print(f"{name:<22} {len(text):>11,} {row}", flush=True)
    print(f"after a text of {len(POISON):,} distinct characters, before each run:")
    for name, text in {"1 MB Hangul": hangul(MB, 6), "1 MB emoji": emoji(MB, 7)}.items():
        embed, embed_cpu = median_seconds(lambda: embed_once(text), args.repeats, poison)  # noqa: B023
        add, add_cpu = (
            (float("nan"), float("nan"))
            if args.no_add
            else median_seconds(lambda: add_once(text), args.repeats, poison)  # noqa: B023
        )
        row = f"{embed:>7.3f} {embed_cpu:>6.3f} {'':>6} {add:>7.3f} {add_cpu:>6.3f}"
        print(f"{name:<22} {len(text):>11,} {row}", flush=True)
    peak, counted = cache_peak(args.cache_words)
    bound = static_embedder._CACHE_BYTES
    print(
        f"word cache: peak {peak / 2**20:.1f} MiB held (its own count {counted / 2**20:.1f} MiB) "
        f"over {args.cache_words:,} distinct words; bound {bound / 2**20:.0f} MiB"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
