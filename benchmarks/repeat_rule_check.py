"""Does a repeat rule merge distinct turns? Does it catch light rewordings? What does a pair cost?

For the rules of :mod:`solar_bench.repeat_rule` (the chosen :func:`is_repeat` and the variants
it beat) and a cosine-only rule on the default (static) embedder at a few thresholds, on every
LoCoMo conversation of the file given, with the turn texts the chat memory stores
(``"Speaker: text"``, :func:`solar_bench.dialogue.load_dialogues`):

(a) **false merges**: of every pair of distinct turns of a conversation (different ``dia_id``
    and different :func:`~solar_bench.repeat_rule.normalise`-d text), how many the rule calls a
    repeat. Pairs whose normalised texts are equal are the data's exact repeats: counted and
    listed apart. Also on the bare texts (the ``"Speaker: "`` prefix dropped: a harder test, a
    name fewer to tell texts apart), across conversations (every pair of turns of two different
    conversations), and for the rewordings of (b) (a rewording of turn ``i`` called a repeat of
    a turn whose normalised text is not turn ``i``'s);
(b) **detection**: each turn's text (after the prefix) is reworded ``--rewordings`` times by
    :func:`solar_bench.rewording.reword_kind` (one ``random.Random(seed)`` for the whole run),
    the prefix put back; the share the rule calls a repeat of the original, overall and per
    kind. ``2 edits``: one extra rewording per turn with two changes (``reword`` twice), apart.
    ``top-5``: the share of rewordings whose original (or a turn with its normalised text) is
    among the 5 turns of its conversation nearest by cosine: what a memory that checks the top 5
    only can catch;
(c) **cost**: median microseconds of one call over a sample of distinct pairs and of
    (rewording, original) pairs, from the two strings (both normalised in the call) and from
    what a memory can keep per stored text (:func:`~solar_bench.repeat_rule.canon`, or the
    vector: a cosine's cost here excludes embedding);
(d) **look-alikes**: each turn's text with one fact changed, once per kind of
    :func:`solar_bench.rewording.look_alike` that applies (a number, a negation, a name, a
    content word, a word for a near neighbour of the corpus's vocabulary: ``horses`` ->
    ``houses``); the share the rule merges with the original. Not a count of false merges in the
    data: a stress test of what the rule would do if such pairs came.

    python benchmarks/repeat_rule_check.py --data locomo-dev.json \
        [--write docs/benchmarks/repeats.md]

``--write`` puts the tables between ``<!-- figures:repeat_rule_check -->`` and
``<!-- /figures -->`` in the page given.
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from solar_bench.dialogue import load_dialogues
from solar_bench.repeat_rule import _ratio_at_least, jaccard_guarded, ratio_guarded
from solar_bench.rewording import (
    KINDS,
    LOOK_ALIKE_KINDS,
    Vocabulary,
    look_alike,
    reword,
    reword_kind,
)
from solar_core.retrieval.repeats import MIN_CONTENT, Canon, canon, normalise, same_canon

F32 = npt.NDArray[np.float32]
THRESHOLDS = (0.9, 0.95, 0.98)
TOP = 5
TWO = "2 edits"
CHOSEN = "is_repeat (chosen)"
BLOCK = re.compile(r"<!-- figures:repeat_rule_check -->\n.*?<!-- /figures -->", re.S)


@dataclass(frozen=True)
class Rule:
    """A lexical rule: ``prepare`` once per text (what a memory could keep), ``decide`` a pair
    of prepared texts; ``cross``: also run on every pair across conversations."""

    name: str
    prepare: Callable[[str], Any]
    decide: Callable[[Any, Any], bool]
    cross: bool = False

    def __call__(self, new: str, old: str) -> bool:
        return self.decide(self.prepare(new), self.prepare(old))


def _equal(a: str, b: str) -> bool:
    return a == b


def _ratio(threshold: float) -> Callable[[str, str], bool]:
    def decide(a: str, b: str) -> bool:
        la, lb = len(a), len(b)
        if 2 * min(la, lb) < threshold * (la + lb):  # difflib's real_quick_ratio, no matcher
            return False
        return _ratio_at_least(a, b, threshold)

    return decide


def _length_first(decide: Callable[[Any, Any], bool], threshold: float) -> Callable[..., bool]:
    """``decide`` on canons behind the same length bound as :func:`_ratio`."""

    def rule(a: Any, b: Any) -> bool:
        la, lb = len(a.norm), len(b.norm)
        if a.norm != b.norm and 2 * min(la, lb) < threshold * (la + lb):
            return False
        return decide(a, b)

    return rule


RULES = (
    Rule("exact (normalised)", normalise, _equal, cross=True),
    Rule(CHOSEN, canon, same_canon, cross=True),
    Rule("is_repeat, any typo", canon, partial(same_canon, known=None), cross=True),
    Rule("is_repeat, no typos", canon, partial(same_canon, max_typos=0), cross=True),
    Rule("is_repeat, no length guard", canon, partial(same_canon, min_content=0), cross=True),
    Rule("difflib ratio >= 0.90", normalise, _ratio(0.9)),
    Rule("difflib ratio >= 0.95", normalise, _ratio(0.95)),
    Rule("ratio >= 0.90 + guards", canon, _length_first(ratio_guarded(0.9), 0.9)),
    Rule("token Jaccard >= 0.8 + guards", canon, jaccard_guarded(0.8)),
)


@dataclass
class Conv:
    sample_id: str
    stored: list[str]
    bare: list[str]
    prefix: list[str]
    # rewordings and look-alikes: (turn index, kind, stored text)
    rewordings: list[tuple[int, str, str]] = field(default_factory=list)
    alikes: list[tuple[int, str, str]] = field(default_factory=list)


@dataclass
class Figures:
    false_within: int = 0
    false_bare: int = 0
    false_cross: int | None = None
    false_rewordings: int = 0
    hits: Counter[str] = field(default_factory=Counter)
    examples: list[tuple[str, str]] = field(default_factory=list)
    us_distinct: tuple[float, float] = (0.0, 0.0)
    us_repeat: tuple[float, float] = (0.0, 0.0)
    hits_bare: int = 0
    merged_alikes: Counter[str] = field(default_factory=Counter)
    missed_short: int = 0  # one-change rewordings missed, original under MIN_CONTENT words
    alike_examples: list[tuple[str, str]] = field(default_factory=list)


def conversations(path: str, per_turn: int, seed: int) -> list[Conv]:
    rng = random.Random(seed)
    alike_rng = random.Random(seed + 1)
    dialogues = load_dialogues(path)
    vocabulary = Vocabulary([t.text.partition(": ")[2] for d in dialogues for t in d.turns])
    out = []
    for d in dialogues:
        stored = [t.text for t in d.turns]
        parts = [t.text.partition(": ") for t in d.turns]
        conv = Conv(d.sample_id, stored, [p[2] for p in parts], [p[0] + p[1] for p in parts])
        for i, bare in enumerate(conv.bare):
            for _ in range(per_turn):
                kind, text = reword_kind(bare, rng)
                conv.rewordings.append((i, kind, conv.prefix[i] + text))
            conv.rewordings.append((i, TWO, conv.prefix[i] + reword(reword(bare, rng), rng)))
            for kind in LOOK_ALIKE_KINDS:
                alike = look_alike(bare, kind, alike_rng, vocabulary)
                if alike is not None and normalise(alike) != normalise(bare):
                    conv.alikes.append((i, kind, conv.prefix[i] + alike))
        out.append(conv)
    return out


def exact_repeats(convs: Sequence[Conv], bare: bool) -> list[tuple[str, list[str]]]:
    """Groups of turns of one conversation with equal normalised texts."""
    out = []
    for c in convs:
        groups: dict[str, list[str]] = {}
        for text in c.bare if bare else c.stored:
            groups.setdefault(normalise(text), []).append(text)
        out += [(c.sample_id, g) for g in groups.values() if len(g) > 1]
    return out


def pairs_in_groups(groups: Sequence[tuple[str, list[str]]]) -> int:
    return sum(len(g) * (len(g) - 1) // 2 for _, g in groups)


def false_merges(
    decide: Callable[[Any, Any], bool],
    prepared: Sequence[Any],
    norms: Sequence[str],
    texts: Sequence[str],
    examples: list[tuple[str, str]] | None = None,
) -> int:
    """Distinct pairs (different normalised texts) of one list that ``decide`` merges."""
    count = 0
    n = len(prepared)
    for i in range(n):
        a, na = prepared[i], norms[i]
        for j in range(i + 1, n):
            if na != norms[j] and decide(a, prepared[j]):
                count += 1
                if examples is not None and len(examples) < 20:
                    examples.append((texts[i], texts[j]))
    return count


def cross_merges(
    decide: Callable[[Any, Any], bool],
    prepared: Sequence[Sequence[Any]],
    norms: Sequence[Sequence[str]],
) -> int:
    count = 0
    for x in range(len(prepared)):
        for y in range(x + 1, len(prepared)):
            for a, na in zip(prepared[x], norms[x], strict=True):
                for b, nb in zip(prepared[y], norms[y], strict=True):
                    if na != nb and decide(a, b):
                        count += 1
    return count


def median_us(call: Callable[[Any, Any], object], pairs: Sequence[tuple[Any, Any]]) -> float:
    """Median over ``pairs`` of one call's microseconds (each pair timed over 20 calls)."""
    reps = 20
    times = []
    for a, b in pairs:
        start = time.perf_counter_ns()
        for _ in range(reps):
            call(a, b)
        times.append((time.perf_counter_ns() - start) / reps / 1000)
    return statistics.median(times)


def lexical(
    rule: Rule, convs: Sequence[Conv], sample: Sequence[tuple[str, str]], repeats: Any
) -> Figures:
    f = Figures()
    prep_all, norms_all = [], []
    for c in convs:
        norms = [normalise(t) for t in c.stored]
        prepared = [rule.prepare(t) for t in c.stored]
        prep_all.append(prepared)
        norms_all.append(norms)
        f.false_within += false_merges(rule.decide, prepared, norms, c.stored, f.examples)
        bare_norms = [normalise(t) for t in c.bare]
        bare = [rule.prepare(t) for t in c.bare]
        f.false_bare += false_merges(rule.decide, bare, bare_norms, c.bare, f.examples)
        for i, kind, text in c.rewordings:
            new = rule.prepare(text)
            if rule.decide(new, prepared[i]):
                f.hits[kind] += 1
            elif kind != TWO and isinstance(new, Canon):
                f.missed_short += min(new.content, prepared[i].content) < MIN_CONTENT
            if kind == TWO:
                continue
            own = norms[i]
            for j, b in enumerate(prepared):
                if norms[j] != own and rule.decide(new, b):
                    f.false_rewordings += 1
                    if len(f.examples) < 20:
                        f.examples.append((text, c.stored[j]))
        for i, kind, text in c.rewordings:
            if kind != TWO:
                bare_text = text[len(c.prefix[i]) :]
                f.hits_bare += rule.decide(rule.prepare(bare_text), bare[i])
        for i, kind, text in c.alikes:
            if rule.decide(rule.prepare(text), prepared[i]):
                f.merged_alikes[kind] += 1
                f.alike_examples.append((c.stored[i], text))
    if rule.cross:
        f.false_cross = cross_merges(rule.decide, prep_all, norms_all)
    pre = [(rule.prepare(a), rule.prepare(b)) for a, b in sample]
    pre_rep = [(rule.prepare(a), rule.prepare(b)) for a, b in repeats]
    f.us_distinct = (median_us(rule, sample), median_us(rule.decide, pre))
    f.us_repeat = (median_us(rule, repeats), median_us(rule.decide, pre_rep))
    return f


def embed(texts: Sequence[str]) -> F32:
    from solar_core.embedders.static_embedder import StaticEmbedder

    embedder = StaticEmbedder()
    rows = [embedder.embed(list(texts[i : i + 256])) for i in range(0, len(texts), 256)]
    v: F32 = np.concatenate(rows).astype(np.float32)
    norms: F32 = np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12).astype(np.float32)
    return v / norms


def cosine(
    convs: Sequence[Conv], sample: Sequence[tuple[str, str]], repeats: Sequence[tuple[str, str]]
) -> tuple[dict[float, Figures], Counter[str]]:
    """Cosine-only rules' figures per threshold, and the top-5 candidate counts per kind."""
    out = {t: Figures(false_cross=0) for t in THRESHOLDS}
    top5: Counter[str] = Counter()
    stored_all = []
    for c in convs:
        norms = np.array([normalise(t) for t in c.stored], dtype=object)
        v = embed(c.stored)
        stored_all.append((v, norms))
        sims = v @ v.T
        distinct = norms[:, None] != norms[None, :]
        upper = np.triu(np.ones_like(distinct), 1) & distinct
        bare_norms = np.array([normalise(t) for t in c.bare], dtype=object)
        vb = embed(c.bare)
        bare_upper = np.triu(np.ones_like(distinct), 1) & (bare_norms[:, None] != bare_norms)
        bare_sims = vb @ vb.T
        idx = np.array([i for i, _, _ in c.rewordings])
        kinds = [k for _, k, _ in c.rewordings]
        vr = embed([t for _, _, t in c.rewordings])
        vrb = embed([t[len(c.prefix[i]) :] for i, _, t in c.rewordings])
        to_all = vr @ v.T  # rewording x turn
        own = to_all[np.arange(len(idx)), idx]
        own_bare = np.einsum("ij,ij->i", vrb, vb[idx])
        other = norms[None, :] != norms[idx][:, None]
        single = np.array([k != TWO for k in kinds])
        alike_idx = np.array([i for i, _, _ in c.alikes], dtype=int)
        alike_kinds = [k for _, k, _ in c.alikes]
        alike_sims = np.einsum("ij,ij->i", embed([t for _, _, t in c.alikes]), v[alike_idx])
        order = np.argsort(-to_all, axis=1, kind="stable")[:, :TOP]
        for r, k in enumerate(kinds):
            if any(norms[j] == norms[idx[r]] for j in order[r]):
                top5[k] += 1
        for t, f in out.items():
            f.false_within += int(((sims >= t) & upper).sum())
            f.false_bare += int(((bare_sims >= t) & bare_upper).sum())
            f.false_rewordings += int(((to_all >= t) & other)[single].sum())
            for r, k in enumerate(kinds):
                f.hits[k] += bool(own[r] >= t)
            f.hits_bare += int(((own_bare >= t) & single).sum())
            for r, k in enumerate(alike_kinds):
                if alike_sims[r] >= t:
                    f.merged_alikes[k] += 1
                    f.alike_examples.append((c.stored[alike_idx[r]], c.alikes[r][2]))
            if len(f.examples) < 20:
                rows, cols = np.nonzero((sims >= t) & upper)
                found = zip(rows, cols, strict=True)
                f.examples += [(c.stored[a], c.stored[b]) for a, b in found][:5]
    for x in range(len(stored_all)):
        for y in range(x + 1, len(stored_all)):
            (vx, nx), (vy, ny) = stored_all[x], stored_all[y]
            s = vx @ vy.T
            distinct = nx[:, None] != ny[None, :]
            for t, f in out.items():
                f.false_cross = (f.false_cross or 0) + int(((s >= t) & distinct).sum())
    from solar_core.embedders.static_embedder import StaticEmbedder

    embedder = StaticEmbedder()

    def from_strings(a: str, b: str) -> float:
        va, vb = embedder.embed([a, b])
        return float(va @ vb) / float(np.linalg.norm(va) * np.linalg.norm(vb))

    def kept(pairs: Sequence[tuple[str, str]]) -> list[tuple[F32, F32]]:
        left, right = embed([a for a, _ in pairs]), embed([b for _, b in pairs])
        return list(zip(left, right, strict=True))

    distinct = (median_us(from_strings, sample), median_us(np.dot, kept(sample)))
    repeat = (median_us(from_strings, repeats), median_us(np.dot, kept(repeats)))
    for f in out.values():
        f.us_distinct, f.us_repeat = distinct, repeat
    return out, top5


def pct(hit: int, total: int) -> str:
    return f"{100 * hit / total:.1f}%" if total else "-"


def tables(
    figures: dict[str, Figures],
    totals: Counter[str],
    alikes: Counter[str],
    top5: Counter[str],
    pairs: dict[str, int],
    repeats: dict[str, int],
    prepare_us: float,
) -> str:
    single = sum(v for k, v in totals.items() if k != TWO)
    n_alikes = sum(alikes.values())
    lines = [
        f"Distinct pairs: {pairs['within']:,} within conversations (stored texts), "
        f"{pairs['bare']:,} (bare texts), {pairs['cross']:,} across conversations, "
        f"{pairs['rewordings']:,} (rewording, other turn). Exact repeats in the data "
        f"(equal normalised texts, not counted): {repeats['stored']} pair(s) of stored texts, "
        f"{repeats['bare']} of bare texts, {repeats['cross']} across conversations. "
        f"Rewordings: {single:,} of one change, {totals[TWO]:,} of two. "
        f"Look-alikes: {n_alikes:,}.",
        "",
        "**(a) False merges** (the bar: 0) and **(d) look-alikes merged** (lower is better):",
        "",
        "| rule | within conv. | bare texts | across conv. | rewording vs other turn "
        "| look-alikes merged |",
        "|---|--:|--:|--:|--:|--:|",
    ]
    for name, f in figures.items():
        cross = "not run" if f.false_cross is None else f"{f.false_cross:,}"
        merged = sum(f.merged_alikes.values())
        lines.append(
            f"| {name} | {f.false_within:,} | {f.false_bare:,} | {cross} | "
            f"{f.false_rewordings:,} | {merged:,} ({pct(merged, n_alikes)}) |"
        )

    def us(pair: tuple[float, float]) -> str:
        return f"{pair[0]:.1f} / {pair[1]:.2f}"

    lines += [
        "",
        "**(b) Detection** of light rewordings (higher is better; `missed, short`: misses "
        f"where a text has fewer than {MIN_CONTENT} content words, so only exact equality "
        "counts) and **(c) cost** (median us "
        "per pair: from the two strings / from what the memory keeps per text, its `canon()` or "
        f"vector; `canon()` of one stored text alone: {prepare_us:.1f} us; a cosine from the "
        "strings embeds both):",
        "",
        "| rule | detection | missed, short | bare texts | 2 edits | us distinct pair "
        "| us repeat pair |",
        "|---|--:|--:|--:|--:|--:|--:|",
    ]
    for name, f in figures.items():
        hit = sum(v for k, v in f.hits.items() if k != TWO)
        short = f"{f.missed_short:,} of {single - hit:,}" if name.startswith("is_repeat") else "-"
        lines.append(
            f"| {name} | {pct(hit, single)} | {short} | {pct(f.hits_bare, single)} | "
            f"{pct(f.hits[TWO], totals[TWO])} | {us(f.us_distinct)} | {us(f.us_repeat)} |"
        )
    kinds = [k for k in KINDS if totals[k]]
    lines += [
        "",
        "Detection per kind of rewording (`top-5`: the original among the 5 turns of its "
        "conversation nearest the rewording by cosine, the candidates a memory would check):",
        "",
        "| rule | " + " | ".join(f"{k} ({totals[k]:,})" for k in kinds) + " |",
        "|---|" + "--:|" * len(kinds),
    ]
    for name, f in figures.items():
        lines.append(f"| {name} | " + " | ".join(pct(f.hits[k], totals[k]) for k in kinds) + " |")
    if top5:
        lines.append("| top-5 | " + " | ".join(pct(top5[k], totals[k]) for k in kinds) + " |")
    kinds = [k for k in LOOK_ALIKE_KINDS if alikes[k]]
    lines += [
        "",
        "Look-alikes merged per kind (lower is better):",
        "",
        "| rule | " + " | ".join(f"{k} ({alikes[k]:,})" for k in kinds) + " |",
        "|---|" + "--:|" * len(kinds),
    ]
    for name, f in figures.items():
        row = (pct(f.merged_alikes[k], alikes[k]) for k in kinds)
        lines.append(f"| {name} | " + " | ".join(row) + " |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--data", required=True, help="a LoCoMo-format JSON file")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--rewordings", type=int, default=3, help="rewordings of one change per turn")
    p.add_argument("--sample", type=int, default=2000, help="pairs timed for (c)")
    p.add_argument("--no-cosine", action="store_true", help="skip the cosine rules")
    p.add_argument("--write", type=Path, help="a page with a figures block to fill")
    args = p.parse_args(argv)

    convs = conversations(args.data, args.rewordings, args.seed)
    totals = Counter(k for c in convs for _, k, _ in c.rewordings)
    alikes = Counter(k for c in convs for _, k, _ in c.alikes)
    rng = random.Random(args.seed)
    sample: list[tuple[str, str]] = []
    repeats: list[tuple[str, str]] = []
    while len(sample) < args.sample:
        c = rng.choice(convs)
        i, j = rng.sample(range(len(c.stored)), 2)
        if normalise(c.stored[i]) != normalise(c.stored[j]):
            sample.append((c.stored[j], c.stored[i]))
    while len(repeats) < args.sample:
        c = rng.choice(convs)
        i, kind, text = rng.choice(c.rewordings)
        if kind != TWO:
            repeats.append((text, c.stored[i]))

    groups = exact_repeats(convs, bare=False)
    bare_groups = exact_repeats(convs, bare=True)
    counts = [Counter(normalise(t) for t in c.stored) for c in convs]
    cross_exact = sum(
        n * counts[y][text]
        for x in range(len(convs))
        for y in range(x + 1, len(convs))
        for text, n in counts[x].items()
    )
    n_turns = [len(c.stored) for c in convs]
    all_pairs = sum(n * (n - 1) // 2 for n in n_turns)
    total = sum(n_turns)
    pairs = {
        "within": all_pairs - pairs_in_groups(groups),
        "bare": all_pairs - pairs_in_groups(bare_groups),
        "cross": total * (total - 1) // 2 - all_pairs - cross_exact,
        "rewordings": sum(
            sum(1 for j in range(len(c.stored)) if normalise(c.stored[j]) != normalise(c.stored[i]))
            for c in convs
            for i, k, _ in c.rewordings
            if k != TWO
        ),
    }
    print(
        f"{len(convs)} conversations, {total} turns; exact repeats (equal normalised texts): "
        f"{pairs_in_groups(groups)} pairs (stored texts), {pairs_in_groups(bare_groups)} (bare)",
        file=sys.stderr,
    )
    for sample_id, g in groups:
        print(f"  exact repeat, stored, {sample_id}: {g}", file=sys.stderr)
    for sample_id, g in bare_groups:
        print(f"  exact repeat, bare, {sample_id}: {g}", file=sys.stderr)

    figures: dict[str, Figures] = {}
    for rule in RULES:
        start = time.perf_counter()
        figures[rule.name] = f = lexical(rule, convs, sample, repeats)
        print(
            f"{rule.name}: {f.false_within} false merges ({time.perf_counter() - start:.0f} s)",
            file=sys.stderr,
        )
        for a, b in f.examples[:8]:
            print(f"  merged: {a!r}\n      <-> {b!r}", file=sys.stderr)
        for a, b in f.alike_examples[: 40 if rule.name == CHOSEN else 3]:
            print(f"  look-alike merged: {a!r}\n      <-> {b!r}", file=sys.stderr)
    top5: Counter[str] = Counter()
    if not args.no_cosine:
        by_threshold, top5 = cosine(convs, sample, repeats)
        for t, f in by_threshold.items():
            figures[f"cosine >= {t:.2f} (static)"] = f
            print(f"cosine >= {t}: {f.false_within} false merges", file=sys.stderr)
            for a, b in f.examples[:5]:
                print(f"  merged: {a!r}\n      <-> {b!r}", file=sys.stderr)
    stored = [t for c in convs for t in c.stored]
    prepare_us = median_us(lambda text, _: canon(text), [(t, None) for t in stored[::3]])
    table = tables(
        figures,
        totals,
        alikes,
        top5,
        pairs,
        {
            "stored": pairs_in_groups(groups),
            "bare": pairs_in_groups(bare_groups),
            "cross": cross_exact,
        },
        prepare_us,
    )
    print(table)
    if args.write:
        page = args.write.read_text(encoding="utf-8")
        block = f"<!-- figures:repeat_rule_check -->\n{table}\n<!-- /figures -->"
        if not BLOCK.search(page):
            raise SystemExit(f"{args.write}: no <!-- figures:repeat_rule_check --> block")
        args.write.write_text(BLOCK.sub(lambda _: block, page), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
