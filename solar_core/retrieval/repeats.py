"""When an offered text repeats a stored one: a lexical rule measured to merge no two distinct
turns of the LoCoMo dev conversations while catching light rewordings
(``docs/benchmarks/repeats.md``); never cosine, which the memory uses only to choose the few
stored texts to compare (:data:`CANDIDATES`).

The rule (:func:`is_repeat`), in one paragraph: two texts are a repeat when they are equal after
:func:`normalise` (NFKC, casefold, every Unicode punctuation mark a space, whitespace collapsed).
Otherwise both must have at least :data:`MIN_CONTENT` content words (words outside
:data:`FUNCTION_WORDS`; shorter texts merge only when equal), and their word sequences, once
contractions are expanded (``don't`` = ``do not``, ``I'm`` = ``I am``, ...) and the
articles and :data:`FILLERS` are set aside, must be the same words in the same order, except for
at most :data:`MAX_EDITS` light edits in all: an article or filler word added, removed or
changed, two adjacent words swapped, or one typo (at most :data:`MAX_TYPOS`): a one-letter
substitution, insertion, deletion or swap of neighbours inside an alphabetic word of six or more
letters that keeps its first and last letters, where one of the two spellings is not a known
word (:data:`KNOWN_WORDS`: the whole words of the default embedder's vocabulary), so
``tomorow`` is a typo of ``tomorrow`` but ``houses`` is not one of ``horses``. Numbers (digits
and number words) and negations are never edited: they must match exactly. Nothing else may
differ, so a different name, place, number, negation or content word blocks a merge however
similar the rest is.

>>> is_repeat("Caroline: I'm really excited about the concert tomorrow!",
...           "caroline: I am excited about a concert tomorrow")
True
>>> is_repeat("I finally moved to Berlin with my family", "I finally moved to Bern with my family")
False
>>> is_repeat("I've always had a love for horses, since I was a kid",
...           "I've always had a love for houses, since I was a kid")
False
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Container, Mapping
from dataclasses import dataclass
from functools import reduce
from importlib import resources
from operator import or_
from typing import Any

import numpy as np

from solar_core.embedders.static_embedder import WEIGHTS
from solar_core.retrieval.lexical import word_tuple

#: how many stored texts, nearest by cosine, an offer is compared with (the original was among
#: the 5 nearest for every light rewording of the dev conversations' turns)
CANDIDATES = 5
#: both texts need this many content words for anything but exact (normalised) equality
MIN_CONTENT = 4
#: light edits allowed in all (ignored words added, removed or changed; adjacent swaps; typos)
MAX_EDITS = 2
#: of which typos
MAX_TYPOS = 1
#: a typo is recognised only inside a word this long (the longer of the two spellings)
TYPO_MIN_LEN = 6

ARTICLES = frozenset({"a", "an", "the"})
#: words that add emphasis or hesitation, not facts: set aside like articles (a small fixed list;
#: not "well", "too", "also", "only", "pretty", which can carry meaning)
FILLERS = frozenset(
    "really just actually so very quite totally basically literally honestly truly simply oh "
    "um uh hmm yeah".split()
)
NEGATIONS = frozenset(
    {"not", "no", "never", "nothing", "none", "nobody", "nowhere", "neither", "nor", "without"}
)
NUMBER_WORDS = frozenset(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty "
    "ninety hundred thousand million billion dozen half once twice first second third fourth "
    "fifth sixth seventh eighth ninth tenth eleventh twelfth twentieth hundredth".split()
)
#: the contracted pieces left when punctuation becomes space (``Ana's`` -> ``ana s``)
_SUFFIXES = frozenset({"m", "re", "s", "ve", "ll", "d", "t"})
#: not content words (for :data:`MIN_CONTENT` only): pronouns, determiners, prepositions,
#: conjunctions, auxiliaries and the contracted pieces
FUNCTION_WORDS = (
    frozenset(
        "i me my mine myself you your yours yourself we us our ours ourselves he him his himself "
        "she her hers herself it its itself they them their theirs themselves this that these "
        "those there here what which who whom whose when where why how all any both each some "
        "such other another am is are was were be been being have has had having do does did "
        "doing done will would shall should can could may might must ought to of in on at by for "
        "with about from into onto over under up down out off than then too also as if or and "
        "but because while until since after before again further once more most less own same "
        "let lets get got".split()
    )
    | ARTICLES
    | FILLERS
    | _SUFFIXES
    | {"'s", "'d"}
)

# contractions expanded: "n't" and "cannot" to "not"; after a pronoun (or how/what/...) "'m",
# "'re", "'ve", "'ll" to "am", "are", "have", "will", and "'s", "'d" to a word of their own that
# matches either reading ("is" or "has"; "would" or "had"); "let's" to "let us"
_NOT_STEMS = {
    stem: word
    for stem, word in (
        pair.split(":")
        for pair in (
            "don:do doesn:does didn:did isn:is aren:are wasn:was "
            "weren:were hasn:has haven:have hadn:had couldn:could wouldn:would "
            "shouldn:should mustn:must needn:need mightn:might can:can won:will "
            "shan:shall ain:ain"
        ).split()
    )
}
_EXPAND: dict[str, tuple[str, frozenset[str]]] = {
    "m": ("am", frozenset({"i"})),
    "re": ("are", frozenset("you we they who what how there where".split())),
    "s": ("'s", frozenset("he she it that there here who what where how when why".split())),
    "ve": ("have", frozenset("i you we they who what how could would should might must".split())),
    "ll": ("will", frozenset("i you we they he she it that there who what".split())),
    "d": ("'d", frozenset("i you we they he she it that there who what how where".split())),
}
#: the words "'s" and "'d" stand for (no normalised word has an apostrophe)
READINGS = {"'s": frozenset({"is", "has"}), "'d": frozenset({"would", "had"})}


class _Punctuation(dict[int, int | str]):
    """``str.translate`` table: a punctuation mark (category ``P*``) to a space, anything else to
    itself, filled as characters are met (at most :data:`_TABLE_CHARS` remembered)."""

    def __missing__(self, code: int) -> int | str:
        out: int | str = " " if unicodedata.category(chr(code)).startswith("P") else code
        if len(self) < _TABLE_CHARS:
            self[code] = out
        return out


_TABLE_CHARS = 1 << 16
_ASCII_MARKS = bytes(c for c in range(128) if unicodedata.category(chr(c)).startswith("P"))
_ASCII_PUNCTUATION = bytes.maketrans(_ASCII_MARKS, b" " * len(_ASCII_MARKS))
_DIGIT = re.compile(r"\d")
_IGNORED = ARTICLES | FILLERS
_PUNCTUATION = _Punctuation()


def normalise(text: str) -> str:
    """NFKC, casefold, every punctuation mark (Unicode category ``P*``) a space, whitespace
    collapsed and stripped.

    >>> normalise("  Hello,   WORLD!  It’s  “great”… ")
    'hello world it s great'
    >>> normalise("Straße — ﬁne") == normalise("STRASSE fine")
    True
    >>> normalise("$5 + 3% = ok?")
    '$5 + 3 = ok'
    """
    if text.isascii():  # NFKC already; casefold is lower; the punctuation by bytes
        text = text.lower().encode("ascii").translate(_ASCII_PUNCTUATION).decode("ascii")
    else:
        text = unicodedata.normalize("NFKC", text).casefold().translate(_PUNCTUATION)
    return " ".join(text.split())


def canonical_words(norm: str) -> list[str]:
    """The words of a normalised text with contractions expanded.

    >>> canonical_words(normalise("I don't think so; I'm sure we can't wait"))
    ['i', 'do', 'not', 'think', 'so', 'i', 'am', 'sure', 'we', 'can', 'not', 'wait']
    >>> " ".join(canonical_words(normalise("It's been years, I'd say. Let's see Ana's cat")))
    "it 's been years i 'd say let us see ana s cat"
    """
    out: list[str] = []
    for word in norm.split():
        prev = out[-1] if out else ""
        if word == "t" and prev in _NOT_STEMS:
            out[-1] = _NOT_STEMS[prev]
            out.append("not")
        elif word == "cannot":
            out += ("can", "not")
        elif word in _EXPAND and prev in _EXPAND[word][1]:
            out.append(_EXPAND[word][0])
        elif word == "s" and prev == "let":
            out.append("us")
        else:
            out.append(word)
    return out


def _is_number(word: str) -> bool:
    """A number word, or a word with a digit (any script's, after NFKC).

    >>> [w for w in "2nd ten times ٣ x5 tent".split() if _is_number(w)]
    ['2nd', 'ten', '٣', 'x5']
    """
    if word.isalpha():
        return word in NUMBER_WORDS
    return _DIGIT.search(word) is not None


@dataclass(frozen=True, slots=True)
class Canon:
    """What :func:`same_canon` compares, computed once per text (a memory can keep it)."""

    norm: str
    core: tuple[str, ...]  # the words, articles and fillers set aside
    ignored: tuple[str, ...]  # the articles and fillers set aside, sorted
    numbers: tuple[str, ...]  # in order
    negations: tuple[str, ...]  # in order
    content: int  # words outside FUNCTION_WORDS
    marks: tuple[str, ...] = ()  # what normalising drops but says something (:func:`marks`)


#: a negative contraction's stem of four letters or more -> the word it contracts
_STEMS = {stem: word for stem, word in _NOT_STEMS.items() if len(stem) > 3}
#: the most bits two repeats' :func:`sketch` es can differ in: the words it keeps differ by at
#: most five (a typo changes two, a misspelt filler one, a changed one two, a ``cannot`` one,
#: in at most :data:`MAX_EDITS` edits; the other edits change no word it keeps), and two sets
#: differ in no more bits than in words: a cheap test before the rule's parse
SKETCH_SLACK = 5
#: the bits of a :func:`sketch`
SKETCH_BITS = 256


def word_key(text: str) -> tuple[str, ...]:
    """The keyword index's words (:func:`~solar_core.retrieval.lexical.words`) of ``text``
    normalised: texts equal after :func:`normalise` have the same key, so a look-up by key
    finds every exact repeat. An ASCII text's key is its own words (normalising changes no
    letter or digit of it, only what separates them), which the keyword index has cached when
    the text was just looked up: a chat turn recalls, then is offered.

    >>> word_key("What's my dog's name? Max!") == word_key("  what s MY dog s name max")
    True
    >>> word_key("It’s “ﬁne”") == word_key("It's fine")
    True
    """
    return word_tuple(text) if text.isascii() else word_tuple(normalise(text))


class _Bits(dict[str, int]):
    """A word -> its :func:`sketch` bit (0 for a word the sketch leaves out), filled as words
    are met (at most :data:`_TABLE_CHARS` remembered)."""

    def __missing__(self, word: str) -> int:
        kept = len(word) > 3 and word not in FILLERS
        bit = 1 << (hash(_STEMS.get(word, word)) % SKETCH_BITS) if kept else 0
        if len(self) < _TABLE_CHARS:
            self[word] = bit
        return bit


_BITS = _Bits()


def sketch(key: tuple[str, ...]) -> int:
    """The words of a :func:`word_key` that the rule never sets aside (of four letters or more,
    no filler, negative contractions reduced to their stem: ``mustn t`` -> ``must``), each set
    as one of :data:`SKETCH_BITS` bits by its hash. Two texts whose sketches differ in more than
    :data:`SKETCH_SLACK` bits are not repeats: one ``^`` rejects nearly every candidate before
    the rule parses the offer. (A bit that differs has a word of one text and not the other,
    so two sketches differ in at most as many bits as the texts' words.)

    >>> one = sketch(word_key("I really mustn't lose the keys, honestly"))
    >>> one == sketch(word_key("I must not lose keys")), bin(one).count("1") <= 3
    (True, True)
    """
    return reduce(or_, map(_BITS.__getitem__, key), 0)


#: characters normalising drops that say something: any but letters, digits, spaces and the
#: light punctuation a rewording changes (a "#", "@", "%", "$", "+", "/", "²" ... must match)
_SYMBOL = re.compile(r"""[^\w\s.,!?;:'"…’‘“”()\[\]\-–—]""")
#: a sign on a number ("-5", "+3"): normalising would drop it
_SIGNED = re.compile(r"(?<![\w.])[-−+](?=\d)")
#: punctuation inside a word ("3.5", "ana.smith@acme.com", "e-mail"; not an apostrophe)
_INSIDE = re.compile(r"(?<=\w)[^\w\s'’]+(?=\w)")


def marks(text: str) -> tuple[str, ...]:
    """The marks two repeats must share: the symbols normalising drops (sorted), then the
    punctuation inside words and the signs of signed numbers, each in order.

    >>> marks("It is -5 degrees, a 5% raise"), marks("It is 5 degrees; a 5 raise!")
    (('%', '-'), ())
    >>> marks("ana.smith@acme.com"), marks("ana@smith.acme.com")
    (('@', '.', '@', '.'), ('@', '@', '.', '.'))
    """
    found, inside, signs = _SYMBOL.findall(text), _INSIDE.findall(text), _SIGNED.findall(text)
    return (*sorted(found), *inside, *signs) if found or inside or signs else ()


def canon(text: str, norm: str | None = None) -> Canon:
    """The :class:`Canon` of ``text`` (``norm``: its :func:`normalise`, if made already).

    >>> c = canon("Oh, we don't have 2 cats, just a dog")
    >>> c.core, c.ignored, c.numbers, c.negations, c.content
    (('we', 'do', 'not', 'have', '2', 'cats', 'dog'), ('a', 'just', 'oh'), ('2',), ('not',), 4)
    """
    norm = normalise(text) if norm is None else norm
    core: list[str] = []
    ignored: list[str] = []
    numbers: list[str] = []
    negations: list[str] = []
    content = 0
    for word in canonical_words(norm):
        if word in _IGNORED or (word[-1] == "y" and _misspelt_filler(word)):
            ignored.append(word)
            continue
        core.append(word)
        if word in NEGATIONS:
            negations.append(word)
        elif word in NUMBER_WORDS if word.isalpha() else _DIGIT.search(word) is not None:
            numbers.append(word)  # (_is_number, inline: every word of every offer)
        content += word not in FUNCTION_WORDS
    ignored.sort()
    made = (tuple(core), tuple(ignored), tuple(numbers), tuple(negations), content, marks(text))
    return Canon(norm, *made)


class _KnownWords(Container[str]):
    """The alphabetic whole words (no ``##`` pieces) of the default embedder's vocabulary,
    read from ``solar_core/weights`` on first use."""

    def __init__(self) -> None:
        self._words: frozenset[str] | None = None

    def words(self) -> frozenset[str]:
        if self._words is None:
            source = resources.files("solar_core") / "weights" / WEIGHTS
            with source.open("rb") as handle, np.load(handle, allow_pickle=False) as npz:
                tokens = npz["tokens"].tobytes().decode("utf-8").split("\n")
            self._words = frozenset(t for t in tokens if t.isalpha())
        return self._words

    def __contains__(self, word: object) -> bool:
        return word in self.words()

    def __len__(self) -> int:
        return len(self.words())


#: what a typo needs one spelling outside of (:func:`same_canon`)
KNOWN_WORDS = _KnownWords()

_LONG_FILLERS = tuple(sorted(f for f in FILLERS if len(f) >= TYPO_MIN_LEN))
_FILLER_ENDS = frozenset((f[0], f[-1]) for f in _LONG_FILLERS)


def _misspelt_filler(word: str) -> bool:
    """A typo (:func:`is_typo`) of a filler of six letters or more (``realy``, ``atcually``)."""
    return (
        len(word) >= TYPO_MIN_LEN - 1
        and (word[0], word[-1]) in _FILLER_ENDS
        and any(is_typo(word, f) for f in _LONG_FILLERS)
    )


def same_word(a: str, b: str) -> bool:
    """Equal, or a contracted ``'s`` / ``'d`` and one of its readings.

    >>> same_word("'s", "has"), same_word("is", "'s"), same_word("is", "has")
    (True, True, False)
    """
    return a == b or b in READINGS.get(a, ()) or a in READINGS.get(b, ())


def is_typo(a: str, b: str) -> bool:
    """One interior edit (substitution, insertion, deletion, swap of neighbours) between two
    alphabetic words, the longer of :data:`TYPO_MIN_LEN` letters or more, same first and last
    letters; never a number word or a negation.

    >>> is_typo("restaurant", "restuarant"), is_typo("restaurant", "restaurants")
    (True, False)
    >>> is_typo("friend", "friends"), is_typo("berlin", "bern"), is_typo("joanna", "johanna")
    (False, False, True)
    """
    la, lb = len(a), len(b)
    if max(la, lb) < TYPO_MIN_LEN or abs(la - lb) > 1 or a == b:
        return False
    if a[0] != b[0] or a[-1] != b[-1] or not (a.isalpha() and b.isalpha()):
        return False
    if not (a.isascii() and b.isascii()):  # (the known words are English: 海阳 is no typo)
        return False
    if a in NUMBER_WORDS or b in NUMBER_WORDS or a in NEGATIONS or b in NEGATIONS:
        return False
    i = 0
    short = min(la, lb)
    while i < short and a[i] == b[i]:
        i += 1
    if la == lb:
        if a[i + 1 :] == b[i + 1 :]:
            return True  # substitution
        return a[i] == b[i + 1] and a[i + 1] == b[i] and a[i + 2 :] == b[i + 2 :]
    if la < lb:
        return a[i:] == b[i + 1 :]  # insertion
    return a[i + 1 :] == b[i:]  # deletion


def _ignored_edits(a: tuple[str, ...], b: tuple[str, ...]) -> int:
    """Ignored words added, removed or changed (a change counts once)."""
    if a == b:
        return 0
    ca, cb = Counter(a), Counter(b)
    return max(sum((ca - cb).values()), sum((cb - ca).values()))


def same_canon(
    a: Canon,
    b: Canon,
    *,
    max_typos: int = MAX_TYPOS,
    min_content: int = MIN_CONTENT,
    known: Container[str] | None = KNOWN_WORDS,
) -> bool:
    """:func:`is_repeat` on texts already put through :func:`canon`. The variants measured:
    ``max_typos`` typos at most; ``min_content`` words for more than exact equality; a typo only
    where one of the two spellings is not in ``known`` (``None``: any typo).

    >>> a = canon("We love the horses on the farm nearby")
    >>> b = canon("We love the houses on the farm nearby")
    >>> same_canon(a, b), same_canon(a, b, known=None)
    (False, True)
    """
    if a.marks != b.marks:  # a sign, a "#", an "@" or a "%" more or less: another fact
        return False
    if a.norm == b.norm:
        return True
    if a.content < min_content or b.content < min_content:
        return False
    x, y = a.core, b.core
    n = len(x)
    if n != len(y) or a.numbers != b.numbers or a.negations != b.negations:
        return False
    edits = typos = 0
    i = 0
    while i < n:
        if x[i] == y[i] or same_word(x[i], y[i]):
            i += 1
        elif (
            i + 1 < n
            and same_word(x[i], y[i + 1])
            and same_word(x[i + 1], y[i])
            and (x[i] in FUNCTION_WORDS or x[i + 1] in FUNCTION_WORDS)  # an order of names counts
        ):
            edits += 1
            i += 2
        elif (
            typos < max_typos
            and is_typo(x[i], y[i])
            and (known is None or x[i] not in known or y[i] not in known)
        ):
            edits += 1
            typos += 1
            i += 1
        else:
            return False
        if edits > MAX_EDITS:
            return False
    return edits + _ignored_edits(a.ignored, b.ignored) <= MAX_EDITS


def same_context(a: Mapping[str, Any], text_a: str, b: Mapping[str, Any], text_b: str) -> bool:
    """Whether two items' metadata say the same of them: equal values under every name but
    ``"key"`` (a fact's key is compared apart), where a string each text contains (a chat
    turn's sides, made from its text) says nothing more than the text.

    >>> same_context({"human": "hi"}, "Human: hi", {"human": "hi!"}, "Human: hi!")
    True
    >>> same_context({"user": "alice"}, "product photo", {"user": "bob"}, "product photo")
    False
    """
    for name in a.keys() | b.keys():
        x, y = a.get(name), b.get(name)
        if name == "key" or _equal(x, y):
            continue
        if type(x) is str and type(y) is str and x in text_a and y in text_b:
            continue
        return False
    return True


def _equal(x: object, y: object) -> bool:
    """Equal values of one type; a value that will not compare (an array, an object whose
    ``==`` raises) is equal to itself only: a repeat is never decided by an error."""
    if x is y:
        return True
    try:
        return type(x) is type(y) and bool(x == y)
    except Exception:  # noqa: BLE001 - any failure to compare means: not the same
        return False


def is_repeat(new: str, old: str) -> bool:
    """The rule of the module's docstring: is ``new`` a repeat of the stored ``old``?

    >>> is_repeat("I have 2 cats and a lovely old dog", "I have 3 cats and a lovely old dog")
    False
    >>> is_repeat("We don't eat meat at home anymore", "We do eat meat at home anymore")
    False
    >>> is_repeat("We honestly don't eat meat at home", "we do not eat meat at home")
    True
    >>> is_repeat("Thanks, Mel!", "thanks mel"), is_repeat("Thanks so much, Mel!", "Thanks, Mel!")
    (True, False)
    >>> is_repeat("It's really helped my sleep and mood at work",
    ...           "It has helped my sleep and mood at work")
    True
    >>> is_repeat("My sister is a doctor in town now", "My sister has a doctor in town now")
    False
    """
    return same_canon(canon(new), canon(old))
