"""Lexical analysis: how a text becomes search terms, in the test set's language.

One analysis for the one lexical index (:class:`ragtriage.core.search.LexicalIndex`)
that the chunk picker searches and the builtin retriever ranks with, so the two
agree. A person's question and a document rarely share their exact words, so:

1. **words** — Unicode word runs, case-folded, ``ß`` → ``ss``, accents and umlauts
   dropped (:func:`fold`): ``garantia`` finds ``garantía``;
2. **the forms a language splits or glues** — German separable verbs (``ruf uns an``
   is also read as ``anrufen``; ``angerufen`` and ``zurückgeschickt`` as ``anrufen``
   and ``zurückschicken``), Spanish verbs with pronouns attached (``llámanos`` is
   also ``llama``, ``devolverlo`` also ``devolver``);
3. the language's **common words** dropped;
4. **compounds** (German, Dutch): a long word made of known words also adds its parts
   (``Versandkosten`` → ``Versand``, ``Kosten``), known from the corpus and the
   lexicon's ``[parts]``;
5. **stems** (Snowball, through PyStemmer): ``bestelle`` finds ``Bestellung``;
6. on the question's side only, **synonyms and colloquial words** from the
   language's lexicon (``ragtriage/data/lexicon-<lang>.txt``: ``Porto`` also asks for
   ``Versandkosten``, ``pasta`` for ``dinero``), at a lower weight than the words
   typed (:data:`EXTRA_WEIGHT`).

The lexicons are small plain-text files shipped with ragtriage (read once);
nothing is downloaded. An unknown language gets folding alone.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cache
from importlib import resources

_WORD = re.compile(r"\w+")
_CLAUSE = re.compile(r"[.,;:!?()\[\]\n\"“”„«»–—]+")
# combining marks left by NFKD on Latin, Greek and Cyrillic letters (accents, umlauts, cedillas)
_MARKS = re.compile("[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]+")
_ACUTE = re.compile("[áéíóú]")
_CLITICS = re.compile(r"(?:(?:me|te|se|nos|os)(?:lo|la|los|las|le|les)?|lo|la|los|las|le|les)$")

#: the weight of a term the question did not type (a synonym, a compound's part)
EXTRA_WEIGHT = 0.5

#: two-letter code → Snowball stemmer name (PyStemmer)
STEMMERS = {
    "da": "danish",
    "de": "german",
    "en": "english",
    "es": "spanish",
    "fi": "finnish",
    "fr": "french",
    "hu": "hungarian",
    "it": "italian",
    "nl": "dutch",
    "no": "norwegian",
    "pt": "portuguese",
    "ro": "romanian",
    "ru": "russian",
    "sv": "swedish",
    "tr": "turkish",
}

COMPOUNDING = frozenset({"de", "nl"})  # languages whose nouns are written together


def language_code(language: str | None) -> str:
    return (language or "").lower().replace("_", "-").split("-")[0]


def fold(word: str) -> str:
    """Lower-case, ``ß`` → ``ss``, accents and umlauts dropped: ``Rückgabe`` → ``ruckgabe``."""
    word = word.casefold()
    if word.isascii():
        return word
    return _MARKS.sub("", unicodedata.normalize("NFKD", word))


# ---------------------------------------------------------------------------- the lexicon


@dataclass(frozen=True)
class Lexicon:
    """A language's lexicon file: separable particles, compound parts, synonyms (folded)."""

    separable: frozenset[str] = frozenset()
    parts: frozenset[str] = frozenset()
    synonyms: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = ()


@cache
def lexicon(language: str | None) -> Lexicon:
    """The lexicon shipped for ``language`` (an empty one when there is none)."""
    lang = language_code(language)
    try:
        text = (resources.files("ragtriage") / "data" / f"lexicon-{lang}.txt").read_text("utf-8")
    except (OSError, ValueError):
        return Lexicon()
    return parse_lexicon(text)


def parse_lexicon(text: str) -> Lexicon:
    sections: dict[str, list[str]] = {}
    current = ""
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if line.startswith("[") and line.endswith("]"):
            current = line[1:-1].strip()
            continue
        sections.setdefault(current, []).append(line)
    synonyms = []
    for line in sections.get("synonyms", ()):
        left, sep, right = line.partition("=")
        typed, said = tuple(_WORD.findall(fold(left))), tuple(right.split())
        if sep and typed and said:
            synonyms.append((typed, said))

    def words(name: str) -> frozenset[str]:
        return frozenset(w for line in sections.get(name, ()) for w in _WORD.findall(fold(line)))

    return Lexicon(words("separable"), words("parts"), tuple(synonyms))


# ---------------------------------------------------------------------------- the analyzer


@dataclass
class Query:
    """A question as search terms: ``terms`` typed, ``extra`` added (synonyms, compound
    parts; weighed :data:`EXTRA_WEIGHT`), ``words`` the typed words unstemmed (for
    close spellings when none is known)."""

    terms: list[str]
    extra: list[str] = field(default_factory=list)
    words: list[str] = field(default_factory=list)


class Analyzer:
    """Text → search terms for one language (see the module docstring)."""

    def __init__(self, language: str | None = None) -> None:
        from .search import stopwords

        self.language = language_code(language) or None
        self.stop = frozenset(fold(w) for w in stopwords(self.language))
        self.lexicon = lexicon(self.language)
        self._stem = _stemmer(self.language)
        self._cache: dict[str, str] = {}
        self._known: frozenset[str] = frozenset()  # stems that compound parts may be
        self._parts: dict[str, list[str]] = {}
        self._synonyms: dict[str, list[tuple[tuple[str, ...], list[str], list[str]]]] | None = None

    @property
    def stems(self) -> bool:
        """True when a stemmer for the language is installed and used."""
        return self._stem is not None

    # -- words -------------------------------------------------------------------------
    def words(self, text: str) -> list[str]:
        """The folded words of ``text`` that are not common words, and the forms the language
        splits or glues (separable verbs, pronouns attached to a verb); not yet stemmed."""
        lang = self.language
        if lang == "de" and self.lexicon.separable:
            return self._german_words(text)
        words = _WORD.findall(fold(text))  # fold the whole text once: a word stays a word
        if lang == "es":
            words += _spanish_verbs(text)
        stop = self.stop
        return [w for w in words if w not in stop] if stop else words

    def _german_words(self, text: str) -> list[str]:
        particles, stop = self.lexicon.separable, self.stop
        out: list[str] = []
        for clause in _CLAUSE.split(fold(text)):
            ws = _WORD.findall(clause)
            for j, w in enumerate(ws):
                if w not in stop:
                    out.append(w)
                    out.extend(_participle(w, particles))
                if w in particles and j:  # "ruf uns an": the verb is a word or three before
                    out.extend(w + v for v in ws[max(0, j - 4) : j] if v not in stop and len(v) > 2)
        return out

    def stem_words(self, words: Iterable[str]) -> list[str]:
        words = list(words)
        if self._stem is None:
            return words
        cache = self._cache
        missing = [w for w in set(words) if w not in cache]
        if missing:
            stems = self._stem(missing)
            if self.language == "es":  # Snowball leaves some infinitives whole ("llamar")
                stems = [
                    s[:-2] if s == w and len(s) > 4 and s[-2:] in ("ar", "er", "ir") else s
                    for w, s in zip(missing, stems)
                ]
            cache.update(zip(missing, stems))
        return [cache[w] for w in words]

    def terms(self, text: str) -> list[str]:
        """The terms a document is indexed under: its words' stems, and its compounds' parts."""
        words = self.words(text)
        if self.language in COMPOUNDING and self._known:
            words = words + [p for w in words for p in self.parts(w)]
        return self.stem_words(words)

    # -- compounds ------------------------------------------------------------------------
    def learn(self, vocabulary: Iterable[str]) -> None:
        """The words a compound's parts may be: the corpus's (folded words) and the lexicon's."""
        if self.language not in COMPOUNDING:
            return
        known = {w for w in vocabulary if len(w) > 2} | set(self.lexicon.parts)
        self._known = frozenset(self.stem_words(known)) | frozenset(known)
        self._parts.clear()

    def parts(self, word: str) -> list[str]:
        """The known words ``word`` is made of (``versandkosten`` → versand, kosten), or []."""
        hit = self._parts.get(word)
        if hit is None:
            hit = self._parts[word] = self._split(word, 0) or []
        return hit

    def _split(self, word: str, depth: int) -> list[str] | None:
        if len(word) < 7 or depth > 2:
            return None
        for i in range(len(word) - 3, 2, -1):  # the longest head first
            head, tail = word[:i], word[i:]
            if head in self.lexicon.separable or not self._is_part(tail):
                continue
            for h in (head[:-1], head) if head.endswith("s") else (head,):  # the linking s first
                if self._is_part(h):
                    return [h, tail]
            more = self._split(head, depth + 1)
            if more:
                return [*more, tail]
        return None

    def _is_part(self, w: str) -> bool:
        if len(w) < 3 or (len(w) == 3 and w not in self.lexicon.parts):
            return False
        return w in self._known or self.stem_words([w])[0] in self._known

    # -- questions -----------------------------------------------------------------------
    def query(self, text: str) -> Query:
        """The search terms of a question: typed, and added (synonyms, compound parts)."""
        words = self.words(text)
        terms = self.stem_words(words)
        extra: list[str] = []
        if self.language in COMPOUNDING and self._known:
            extra += self.stem_words(p for w in words for p in self.parts(w))
        extra += self._expansions(text)
        return Query(terms, [t for t in extra if t not in terms], words)

    def _expansions(self, text: str) -> list[str]:
        """The lexicon's words for the words and phrases of ``text`` (matched by stem)."""
        table = self._synonym_table()
        if not table:
            return []
        typed = _WORD.findall(fold(text))
        stems = self.stem_words(typed)
        out: list[str] = []
        for i, s in enumerate(stems):
            for phrase_words, phrase_stems, said in table.get(s, ()):
                n = len(phrase_stems)
                if stems[i : i + n] == phrase_stems or typed[i : i + n] == list(phrase_words):
                    out.extend(said)
        return out

    def _synonym_table(self) -> dict[str, list[tuple[tuple[str, ...], list[str], list[str]]]]:
        if self._synonyms is None:
            table: dict[str, list[tuple[tuple[str, ...], list[str], list[str]]]] = {}
            for typed, said in self.lexicon.synonyms:
                stems = self.stem_words(typed)
                table.setdefault(stems[0], []).append(
                    (typed, stems, self.stem_words(self.words(" ".join(said))))
                )
            self._synonyms = table
        return self._synonyms


def _participle(word: str, particles: frozenset[str]) -> list[str]:
    """German past participles read as their verb too: ``angerufen`` → ``anrufen``,
    ``zurückgeschickt`` → ``zuruckschickt``, ``zuruckschick``; ``geliefert`` → ``liefert``, ``liefer``."""
    if len(word) < 6 or "ge" not in word:
        return []
    out: list[str] = []
    if word.startswith("ge"):
        out.append(word[2:])
    else:
        for p in particles:
            if word.startswith(p + "ge") and len(word) - len(p) > 5:
                out.append(p + word[len(p) + 2 :])
                break
    out += [w[:-1] for w in out if w.endswith("t") and len(w) > 4]
    return out


def _spanish_verbs(text: str) -> list[str]:
    """Spanish verbs with pronouns attached read as the verb too: ``llámanos`` → ``llama``,
    ``escríbenos`` → ``escribe``, ``devolverlo`` → ``devolver`` (folded)."""
    out: list[str] = []
    for raw in _WORD.findall(text.casefold()):
        if len(raw) < 6:
            continue
        m = _CLITICS.search(raw)
        if m is None:
            continue
        base = raw[: m.start()]
        if len(base) > 2 and (_ACUTE.search(base) or base.endswith(("ar", "er", "ir"))):
            out.append(fold(base))
    return out


def _stemmer(language: str | None) -> Callable[[list[str]], list[str]] | None:
    """``Stemmer.Stemmer(...).stemWords`` for ``language``, or None (unknown language, or
    PyStemmer not installed: words are then matched whole, folded)."""
    name = STEMMERS.get(language or "")
    if name is None:
        return None
    try:
        import Stemmer  # PyStemmer
    except ImportError:  # pragma: no cover - a runtime dependency; guarded for odd installs
        return None
    stem: Callable[[list[str]], list[str]] = Stemmer.Stemmer(name).stemWords
    return stem


# ---------------------------------------------------------------------------- in words


def not_retrieved(depth: int, system: str | None = None) -> str:
    """Why an expected chunk is not in a run's ranking, for a person: "not among the 10
    chunks the system returned", or, with no chunk at all, what the builtin system does."""
    if depth:
        return f"not retrieved: not among the {depth} chunk{'s' * (depth != 1)} the system returned"
    if system == "builtin":
        return (
            "not retrieved: the builtin system found no chunk sharing a word with the question "
            "(words are compared by stem, in the test set's language; p searches the corpus)"
        )
    return "not retrieved: the system returned no chunk for this question"


__all__ = ["EXTRA_WEIGHT", "Analyzer", "Lexicon", "Query", "fold", "lexicon", "not_retrieved"]
