"""Light rewordings of a text: what a user says again, nearly word for word.

:func:`reword` applies **one** light change, of a kind drawn uniformly among the :data:`KINDS`
that apply to the text (every text has a letter or a word, so at least ``case`` or ``spacing``
applies), and never returns the text unchanged. The kinds:

- ``case``: the whole text lower-cased, one word's first letter flipped, or one word upper-cased;
- ``punctuation``: the closing mark dropped or changed (``.`` / ``!``), a comma dropped or added
  after a word, or a ``!`` doubled;
- ``spacing``: a space doubled, a space turned into a line break, or a trailing space added;
- ``filler``: a filler word (``really``, ``just``, ``actually``, ``so``, ``totally``,
  ``honestly``) added before a word, or one already there removed;
- ``contraction``: one contraction expanded (``I'm`` -> ``I am``, ``don't`` -> ``do not``,
  ``it's been`` -> ``it has been``, ``I'd been`` -> ``I had been``) or one expandable pair
  contracted (``I have`` -> ``I've``);
- ``article``: one article changed (``a``/``an`` <-> ``the``, ``a``/``an`` as the next word
  needs) or dropped;
- ``swap``: two adjacent plain words (letters only, no punctuation attached) swapped;
- ``typo``: one letter substituted, inserted, deleted, or swapped with its neighbour inside a word
  of six or more letters, its first and last letters kept (the common typo; one at the edge of a
  word is not generated).

Deterministic for a given ``random.Random`` state (nothing else is random):

>>> import random
>>> rng = random.Random(3)
>>> text = "I'm so excited about the concert tomorrow, it has been a long wait!"
>>> [reword_kind(text, rng) for _ in range(3)]  # doctest: +NORMALIZE_WHITESPACE
[('filler', "I'm so actually excited about the concert tomorrow, it has been a long wait!"),
 ('typo', "I'm so excited about the concert tomoraow, it has been a long wait!"),
 ('typo', "I'm so excited about the cowncert tomorrow, it has been a long wait!")]
>>> reword_as(text, "contraction", random.Random(1))
'I am so excited about the concert tomorrow, it has been a long wait!'
>>> reword_as(text, "swap", random.Random(1))
"I'm so excited the about concert tomorrow, it has been a long wait!"
>>> reword(text, random.Random(3)) == reword(text, random.Random(3))
True
>>> reword_as("Hello there", "typo", rng) is None  # no word of six letters
True
"""

from __future__ import annotations

import random
import re
import string
from collections.abc import Callable

KINDS = ("case", "punctuation", "spacing", "filler", "contraction", "article", "swap", "typo")
FILLERS = ("really", "just", "actually", "so", "totally", "honestly")
_APOS = "'’"
#: contracted form (lower case, straight apostrophe) -> expanded form
CONTRACTIONS: dict[str, str] = {
    "i'm": "i am",
    "you're": "you are",
    "we're": "we are",
    "they're": "they are",
    "it's": "it is",
    "that's": "that is",
    "what's": "what is",
    "here's": "here is",
    "there's": "there is",
    "he's": "he is",
    "she's": "she is",
    "who's": "who is",
    "how's": "how is",
    "let's": "let us",
    "i've": "i have",
    "you've": "you have",
    "we've": "we have",
    "they've": "they have",
    "must've": "must have",
    "could've": "could have",
    "would've": "would have",
    "should've": "should have",
    "i'll": "i will",
    "you'll": "you will",
    "we'll": "we will",
    "they'll": "they will",
    "it'll": "it will",
    "he'll": "he will",
    "she'll": "she will",
    "i'd": "i would",
    "you'd": "you would",
    "we'd": "we would",
    "they'd": "they would",
    "don't": "do not",
    "doesn't": "does not",
    "didn't": "did not",
    "isn't": "is not",
    "aren't": "are not",
    "wasn't": "was not",
    "weren't": "were not",
    "haven't": "have not",
    "hasn't": "has not",
    "hadn't": "had not",
    "can't": "cannot",
    "couldn't": "could not",
    "won't": "will not",
    "wouldn't": "would not",
    "shouldn't": "should not",
}
#: expanded form -> contracted form (``it has`` too: ``it's been``)
_EXPANDED: dict[str, str] = {v: k for k, v in CONTRACTIONS.items()} | {
    "it has": "it's",
    "he has": "he's",
    "she has": "she's",
    "that has": "that's",
    "there has": "there's",
    "can not": "can't",
}
_CONTRACTED_RE = re.compile(
    r"\b(" + "|".join(re.escape(k).replace("'", f"[{_APOS}]") for k in CONTRACTIONS) + r")\b",
    re.IGNORECASE,
)
_EXPANDED_RE = re.compile(
    r"\b(" + "|".join(k.replace(" ", r"\s+") for k in _EXPANDED) + rf")\b(?![{_APOS}])",
    re.IGNORECASE,
)
_ARTICLE_RE = re.compile(r"\b(a|an|the)\b(?![" + _APOS + r"-]) (\w)", re.IGNORECASE)
_FILLER_RE = re.compile(r"\b(" + "|".join(FILLERS) + r")\b,? ", re.IGNORECASE)
#: a word of letters (not the tail of "don't" or "well-known")
_WORD_RE = re.compile(r"(?<![\w" + _APOS + r"-])[^\W\d_]+\b")
_TYPO_RE = re.compile(r"(?<![\w" + _APOS + r"-])[^\W\d_]{6,}(?![\w" + _APOS + r"-])")
_CLOSING = re.compile(r"[.!?]+\s*$")
_LETTERS = string.ascii_lowercase


def _match_case(template: str, word: str) -> str:
    """``word`` with ``template``'s capitalisation (all upper, first upper, or as is)."""
    if template.isupper() and len(template) > 1:
        return word.upper()
    if template[:1].isupper():
        return word[:1].upper() + word[1:]
    return word


def _case(text: str, rng: random.Random) -> str | None:
    words = list(_WORD_RE.finditer(text))
    options: list[Callable[[], str]] = []
    if text != text.lower():
        options.append(text.lower)
    if words:

        def flip() -> str:
            m = rng.choice(words)
            return text[: m.start()] + m.group()[0].swapcase() + text[m.start() + 1 :]

        def shout() -> str:
            m = rng.choice(words)
            return text[: m.start()] + m.group().upper() + text[m.end() :]

        options += (flip, shout)
    return rng.choice(options)() if options else None


def _punctuation(text: str, rng: random.Random) -> str | None:
    options: list[Callable[[], str]] = []
    closing = _CLOSING.search(text)
    commas = [m.start() for m in re.finditer(",", text)]
    gaps = [m.end() for m in re.finditer(r"[^\W_] ", text)]
    bangs = [m.start() for m in re.finditer("!", text)]
    if closing:
        end = closing.start()
        options.append(lambda: text[:end])
        mark = "!" if closing.group().strip() == "." else "."
        options.append(lambda: text[:end] + mark)
    if commas:
        options.append(lambda: (lambda i: text[:i] + text[i + 1 :])(rng.choice(commas)))
    if gaps:
        options.append(lambda: (lambda i: text[: i - 1] + "," + text[i - 1 :])(rng.choice(gaps)))
    if bangs:
        options.append(lambda: (lambda i: text[:i] + "!" + text[i:])(rng.choice(bangs)))
    return rng.choice(options)() if options else None


def _spacing(text: str, rng: random.Random) -> str | None:
    spaces = [m.start() for m in re.finditer(" ", text)]
    options: list[Callable[[], str]] = [lambda: text + " "]
    if spaces:
        options.append(lambda: (lambda i: text[:i] + "  " + text[i + 1 :])(rng.choice(spaces)))
        options.append(lambda: (lambda i: text[:i] + "\n" + text[i + 1 :])(rng.choice(spaces)))
    return rng.choice(options)() if text.strip() else None


def _filler(text: str, rng: random.Random) -> str | None:
    present = list(_FILLER_RE.finditer(text))
    starts = [m.start() for m in _WORD_RE.finditer(text)]
    if present and (not starts or rng.random() < 0.5):
        m = rng.choice(present)
        rest = text[m.end() :]
        if m.start() == 0 or text[: m.start()].rstrip().endswith((".", "!", "?")):
            rest = rest[:1].upper() + rest[1:]  # the next word starts the sentence now
        return text[: m.start()] + rest
    if not starts:
        return None
    i = rng.choice(starts)
    word = rng.choice(FILLERS)
    if i == 0 or text[:i].rstrip().endswith((".", "!", "?")):  # it starts the sentence now
        first = text[i] if text[i : i + 2] == "I " else text[i].lower()
        return text[:i] + word.capitalize() + " " + first + text[i + 1 :]
    return text[:i] + word + " " + text[i:]


def _contraction(text: str, rng: random.Random) -> str | None:
    found = [(m, "expand") for m in _CONTRACTED_RE.finditer(text)]
    found += [(m, "contract") for m in _EXPANDED_RE.finditer(text)]
    if not found:
        return None
    m, how = rng.choice(found)
    source = m.group()
    key = source.lower().replace("’", "'")
    if how == "expand":
        out = CONTRACTIONS[key]
        after = text[m.end() :]
        if key.endswith("'s") and re.match(r"\s+(been|got)\b", after, re.IGNORECASE):
            out = out[: -len("is")] + "has"  # it's been -> it has been
        elif key.endswith("'d") and re.match(r"\s+(been|had|better)\b", after, re.IGNORECASE):
            out = out[: -len("would")] + "had"  # I'd been -> I had been
    else:
        out = _EXPANDED[" ".join(key.split())]
    if out.startswith("i ") or out.startswith("i'") or out == "i":
        out = "I" + out[1:]
    return text[: m.start()] + _match_case(source, out) + text[m.end() :]


def _article(text: str, rng: random.Random) -> str | None:
    found = list(_ARTICLE_RE.finditer(text))
    if not found:
        return None
    m = rng.choice(found)
    article, after = m.group(1), m.group(2)
    if rng.random() < 0.5:  # drop it
        start = m.start()
        rest = text[m.start(2) :]
        if article[0].isupper():
            rest = rest[:1].upper() + rest[1:]
        return text[:start] + rest
    if article.lower() == "the":
        new = "an" if after.lower() in "aeiou" else "a"
    else:
        new = "the"
    return text[: m.start(1)] + _match_case(article, new) + text[m.end(1) :]


def _swap(text: str, rng: random.Random) -> str | None:
    words = text.split(" ")
    pairs = [
        i
        for i in range(len(words) - 1)
        if words[i].isalpha()
        and words[i + 1].isalpha()
        and words[i].casefold() != words[i + 1].casefold()
    ]
    if not pairs:
        return None
    i = rng.choice(pairs)
    words[i], words[i + 1] = words[i + 1], words[i]
    return " ".join(words)


def _typo(text: str, rng: random.Random) -> str | None:
    found = list(_TYPO_RE.finditer(text))
    if not found:
        return None
    m = rng.choice(found)
    word = m.group()
    n = len(word)
    ops = ["substitute", "insert", "delete"]
    swaps = [i for i in range(1, n - 2) if word[i] != word[i + 1]]
    if swaps:
        ops.append("transpose")
    op = rng.choice(ops)
    if op == "substitute":
        i = rng.randrange(1, n - 1)
        new = word[:i] + rng.choice(_LETTERS.replace(word[i].lower(), "")) + word[i + 1 :]
    elif op == "insert":
        i = rng.randrange(1, n)
        new = word[:i] + rng.choice(_LETTERS) + word[i:]
    elif op == "delete":
        i = rng.randrange(1, n - 1)
        new = word[:i] + word[i + 1 :]
    else:
        i = rng.choice(swaps)
        new = word[:i] + word[i + 1] + word[i] + word[i + 2 :]
    return text[: m.start()] + new + text[m.end() :]


_APPLY: dict[str, Callable[[str, random.Random], str | None]] = {
    "case": _case,
    "punctuation": _punctuation,
    "spacing": _spacing,
    "filler": _filler,
    "contraction": _contraction,
    "article": _article,
    "swap": _swap,
    "typo": _typo,
}


def reword_as(text: str, kind: str, rng: random.Random) -> str | None:
    """``text`` with one change of ``kind``, or ``None`` when that kind cannot change it."""
    out = _APPLY[kind](text, rng)
    return out if out is not None and out != text else None


def applicable(text: str) -> list[str]:
    """The kinds that can change ``text`` (tried with a throwaway generator).

    >>> applicable("Wow!")
    ['case', 'punctuation', 'spacing', 'filler']
    """
    probe = random.Random(0)
    return [k for k in KINDS if reword_as(text, k, probe) is not None]


def reword_kind(text: str, rng: random.Random) -> tuple[str, str]:
    """``(kind, rewording)``: one change of a kind drawn uniformly among those that apply.

    Raises ``ValueError`` for a text no kind can change (an empty or all-space text)."""
    kinds = list(KINDS)
    while kinds:
        kind = kinds.pop(rng.randrange(len(kinds)))
        out = reword_as(text, kind, rng)
        if out is not None:
            return kind, out
    raise ValueError(f"nothing to reword in {text!r}")


def reword(text: str, rng: random.Random) -> str:
    """``text`` lightly reworded: one change of one of the :data:`KINDS` (see the module)."""
    return reword_kind(text, rng)[1]


# --- look-alikes: one fact changed, the rest word for word ------------------------------------

#: the kinds of :func:`look_alike`: what a repeat rule must *not* merge
LOOK_ALIKE_KINDS = ("number", "negation", "name", "word", "near word")
_NUMBER_WORDS = (
    "one two three four five six seven eight nine ten eleven twelve fifteen twenty thirty "
    "forty fifty hundred first second third fourth fifth".split()
)
_NUMBER_WORD_RE = re.compile(r"\b(" + "|".join(_NUMBER_WORDS) + r")\b", re.IGNORECASE)
_AUXILIARY_RE = re.compile(
    r"\b(is|are|was|were|am|do|does|did|can|could|will|would|should|have|has|had)\b(?= \w)",
    re.IGNORECASE,
)
_NEGATED_RE = re.compile(r"n[" + _APOS + r"]t\b|\b(not|never) ", re.IGNORECASE)
_NOT_STEM = {"can": "can", "won": "will", "ca": "can", "wo": "will"}
#: not content words, for :class:`Vocabulary` (a short list: pronouns, auxiliaries, particles)
_COMMON = frozenset(
    "the and but for not you your our its his her him she they them their this that these those "
    "was were are have has had been being what when where which who how why with from into onto "
    "about just really very so too also then than there here some any all out off over under "
    "will would could should can may might must shall did does done got get let like one".split()
)


class Vocabulary:
    """The words :func:`look_alike` draws replacements from: capitalised words met inside
    sentences (``names``) and lower-case content words (``words``) of a corpus, and a deletion
    index to find a word's near neighbours (edit distance 1 or 2)."""

    def __init__(self, texts: list[str]) -> None:
        names: set[str] = set()
        words: set[str] = set()
        for text in texts:
            for m in _WORD_RE.finditer(text):
                w = m.group()
                if len(w) < 3 or w.lower() in _COMMON:
                    continue
                before = text[: m.start()].rstrip()
                if w[0].isupper() and before and not before.endswith((".", "!", "?", ":")):
                    names.add(w)
                elif w.islower():
                    words.add(w)
        self.names = sorted(names - {w.capitalize() for w in words})
        self.words = sorted(words)
        self._near: dict[str, set[str]] = {}
        for w in self.words + [n.lower() for n in self.names]:
            for d in _deletions(w):
                self._near.setdefault(d, set()).add(w)

    def near(self, word: str) -> list[str]:
        """Other words of the vocabulary at edit distance 1 or 2 from ``word`` (lower case).

        >>> Vocabulary(["We went to Berlin and Bern.", "it was bought and brought"]).near("berlin")
        ['bern']
        """
        found: set[str] = set()
        for d in _deletions(word):
            found |= self._near.get(d, set())
        found.discard(word)
        return sorted(w for w in found if _distance(word, w) <= 2)


def _deletions(word: str) -> set[str]:
    """``word`` with none, one or two letters deleted."""
    one = {word[:i] + word[i + 1 :] for i in range(len(word))}
    return {word} | one | {w[:i] + w[i + 1 :] for w in one for i in range(len(w))}


def _distance(a: str, b: str) -> int:
    """Levenshtein distance."""
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, cb in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (ca != cb))
    return row[-1]


def look_alike(text: str, kind: str, rng: random.Random, vocabulary: Vocabulary) -> str | None:
    """``text`` with one fact changed, of ``kind`` (one of :data:`LOOK_ALIKE_KINDS`), or ``None``
    when that kind finds nothing to change:

    - ``number``: a number (digits, or a number word) replaced by another;
    - ``negation``: a negation removed (``n't``, ``not``, ``never``) or ``not`` put after an
      auxiliary (``is`` -> ``is not``);
    - ``name``: a capitalised word inside a sentence replaced by another such word of the
      vocabulary;
    - ``word``: a lower-case content word replaced by another of the vocabulary;
    - ``near word``: a word of four letters or more replaced by a word of the vocabulary at edit
      distance 1 or 2 (``Berlin`` -> ``Bern``, ``bought`` -> ``brought``, ``friend`` ->
      ``friends``): the case a typo rule can get wrong.

    >>> vocabulary = Vocabulary(["Ana and Ada live in Berlin, not Bern.", "I bought 2 cats"])
    >>> rng = random.Random(0)
    >>> look_alike("I bought 2 cats in Berlin", "number", rng, vocabulary)
    'I bought 4 cats in Berlin'
    >>> look_alike("I bought 2 cats in Berlin", "near word", rng, vocabulary)
    'I bought 2 cats in Bern'
    >>> look_alike("I like jazz", "negation", rng, vocabulary) is None
    True
    """
    if kind == "number":
        return _new_number(text, rng)
    if kind == "negation":
        return _flip_negation(text, rng)
    if kind == "name":
        spots = [
            m
            for m in _WORD_RE.finditer(text)
            if m.group() in vocabulary.names and len(vocabulary.names) > 1
        ]
        if not spots:
            return None
        m = rng.choice(spots)
        new = rng.choice([n for n in vocabulary.names if n.lower() != m.group().lower()])
        return text[: m.start()] + new + text[m.end() :]
    spots = [m for m in _WORD_RE.finditer(text) if m.group().lower() not in _COMMON]
    if kind == "word":
        spots = [m for m in spots if m.group().islower() and len(m.group()) >= 3]
        if not spots or len(vocabulary.words) < 2:
            return None
        m = rng.choice(spots)
        new = rng.choice([w for w in vocabulary.words if w != m.group()])
        return text[: m.start()] + new + text[m.end() :]
    if kind == "near word":
        found = [
            (m, near)
            for m in spots
            if len(m.group()) >= 4 and (near := vocabulary.near(m.group().lower()))
        ]
        if not found:
            return None
        m, near = rng.choice(found)
        return text[: m.start()] + _match_case(m.group(), rng.choice(near)) + text[m.end() :]
    raise ValueError(f"unknown kind {kind!r}; use one of {LOOK_ALIKE_KINDS}")


def _new_number(text: str, rng: random.Random) -> str | None:
    spots = list(re.finditer(r"\d+", text)) + list(_NUMBER_WORD_RE.finditer(text))
    if not spots:
        return None
    m = rng.choice(spots)
    old = m.group()
    if old.isdigit():
        new = str(int(old) + rng.choice([1, 2, 10])) if len(old) < 18 else old[:-1] + "x"
        new = new.zfill(len(old))
    else:
        new = _match_case(old, rng.choice([w for w in _NUMBER_WORDS if w != old.lower()]))
    return text[: m.start()] + new + text[m.end() :]


def _flip_negation(text: str, rng: random.Random) -> str | None:
    negated = list(_NEGATED_RE.finditer(text))
    auxiliaries = list(_AUXILIARY_RE.finditer(text))
    if not negated and not auxiliaries:
        return None
    if negated and (not auxiliaries or rng.random() < 0.5):
        m = rng.choice(negated)
        if m.group().lower().startswith("n"):  # "n't": don't -> do, can't -> can, won't -> will
            start = text.rfind(" ", 0, m.start()) + 1
            stem = text[start : m.start()]
            fixed = _NOT_STEM.get(stem.lower(), stem)
            return text[:start] + _match_case(stem, fixed) + text[m.end() :]
        return text[: m.start()] + text[m.end() :]
    m = rng.choice(auxiliaries)
    return text[: m.end()] + " not" + text[m.end() :]
