"""The chunk picker's search: finds what an expert types, in the test set's language.

Unlike the builtin retriever's index (``ragtriage.core.search``, whose exact tokens
are part of what a run measures), the picker is a finding aid, so it is forgiving:

* words are folded (lower-cased, ``ß`` → ``ss``, accents and umlauts dropped), so
  ``garantia`` finds ``garantía`` and ``Rucksendung`` finds ``Rücksendung``;
* then stemmed with the Snowball stemmer of the test set's ``language`` (es, de, nl,
  en, … via PyStemmer), so ``bestelle`` finds ``Bestellung``;
* the language's common words are dropped on both sides;
* when no word of the query is in the corpus, each unknown word is replaced by the
  closest words of the corpus (rapidfuzz, similarity ≥ :data:`FUZZY_CUTOFF`), and the
  result says so (:attr:`Hits.fuzzy`);
* an empty query browses the corpus by document (:meth:`PickerIndex.browse`).

Scoring is BM25 (``bm25s``); equal scores keep corpus order.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from itertools import chain
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

_WORD = re.compile(r"\w+")
# combining marks left by NFKD on Latin, Greek and Cyrillic letters (accents, umlauts, cedillas)
_MARKS = re.compile("[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]+")

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

#: the least rapidfuzz ``ratio`` (0–100) a corpus word needs to stand in for an unknown query word
FUZZY_CUTOFF = 75.0
#: at most this many corpus words stand in for one unknown query word
FUZZY_LIMIT = 3


def _lang(language: str | None) -> str:
    return (language or "").lower().replace("_", "-").split("-")[0]


def fold(word: str) -> str:
    """Lower-case, ``ß`` → ``ss``, accents and umlauts dropped: ``Rückgabe`` → ``ruckgabe``."""
    word = word.casefold()
    if word.isascii():
        return word
    return _MARKS.sub("", unicodedata.normalize("NFKD", word))


class Analyzer:
    """Text → search terms for one language: words, folded, stop words dropped, stemmed."""

    def __init__(self, language: str | None = None) -> None:
        from ..core.search import stopwords

        self.language = _lang(language) or None
        self.stop = frozenset(fold(w) for w in stopwords(self.language))
        self._stem = _stemmer(self.language)
        self._cache: dict[str, str] = {}

    @property
    def stems(self) -> bool:
        """True when a stemmer for the language is installed and used."""
        return self._stem is not None

    def words(self, text: str) -> list[str]:
        """The folded words of ``text`` that are not stop words (not yet stemmed)."""
        stop = self.stop
        words = _WORD.findall(fold(text))  # fold the whole text once: a word stays a word
        return [w for w in words if w not in stop] if stop else words

    def terms(self, text: str) -> list[str]:
        """The search terms of ``text``: folded, stop words dropped, stemmed."""
        return self.stem_words(self.words(text))

    def stem_words(self, words: list[str]) -> list[str]:
        if self._stem is None:
            return words
        cache = self._cache
        missing = [w for w in set(words) if w not in cache]
        if missing:
            cache.update(zip(missing, self._stem(missing)))
        return [cache[w] for w in words]


def _stemmer(language: str | None) -> Any:
    """``Stemmer.Stemmer(...).stemWords`` for ``language``, or None (unknown language,
    or PyStemmer not installed: the picker then matches folded whole words)."""
    name = STEMMERS.get(language or "")
    if name is None:
        return None
    try:
        import Stemmer  # PyStemmer
    except ImportError:  # pragma: no cover - a runtime dependency; guarded for odd installs
        return None
    return Stemmer.Stemmer(name).stemWords


@dataclass
class Hits:
    """A search's ranked chunks, and how they were found."""

    results: list[tuple[str, float]]
    #: unknown query word → the corpus words searched instead (empty unless the fallback ran)
    fuzzy: dict[str, list[str]] = field(default_factory=dict)


class PickerIndex:
    """BM25 over folded, stemmed words of every chunk. Build once (in a worker), search often."""

    def __init__(
        self,
        ids: list[str],
        docs: list[str],
        bm25: Any,
        vocab: dict[str, int],
        words: dict[str, str],
        analyzer: Analyzer,
    ) -> None:
        self.ids = ids
        self.docs = docs
        self._bm25 = bm25
        self._vocab = vocab  # stemmed term → column
        self._words = words  # folded corpus word → its stem (what the fuzzy fallback matches)
        self._word_list: list[str] | None = None
        self.analyzer = analyzer
        self.language = analyzer.language

    def __len__(self) -> int:
        return len(self.ids)

    @classmethod
    def build(cls, chunks: Iterable[Any] | Mapping[str, Any], language: str | None = None) -> PickerIndex:
        """Index :class:`~ragtriage.core.corpus.Chunk` objects (or a Corpus, or ``(id, text)``
        pairs), in the order given."""
        import bm25s
        from bm25s.tokenization import Tokenized

        items: Iterable[Any] = chunks.values() if isinstance(chunks, Mapping) else chunks
        analyzer = Analyzer(language)
        ids: list[str] = []
        docs: list[str] = []
        doc_words: list[list[str]] = []
        for c in items:
            if isinstance(c, tuple):
                cid, text = c
                doc = ""
            else:
                cid, text, doc = c.id, c.text, getattr(c, "doc", None) or ""
            ids.append(cid)
            docs.append(doc)
            doc_words.append(analyzer.words(text))
        # stem each distinct word once (PyStemmer on a batch), then map words → term ids
        distinct = list(dict.fromkeys(chain.from_iterable(doc_words)))  # first-seen order
        stems = dict(zip(distinct, analyzer.stem_words(distinct)))
        vocab: dict[str, int] = {}
        setdefault = vocab.setdefault
        term_of = {w: setdefault(stem, len(vocab)) for w, stem in stems.items()}
        get = term_of.__getitem__
        doc_tokens = [list(map(get, ws)) for ws in doc_words]
        bm25 = None
        if ids:
            bm25 = bm25s.BM25()
            bm25.index(Tokenized(ids=doc_tokens, vocab=vocab), show_progress=False)
        return cls(ids, docs, bm25, vocab, stems, analyzer)

    # -- search ------------------------------------------------------------------------
    def search(self, query: str, n: int = 30) -> Hits:
        """The best ``n`` chunks for ``query``; when no query word is in the corpus, the
        closest corpus words are searched instead (:attr:`Hits.fuzzy` names them)."""
        words = self.analyzer.words(query)
        terms = self.analyzer.stem_words(words)
        results = self._top(self._term_ids(terms), n)
        if results or not words:
            return Hits(results)
        fuzzy = self._close_words([w for w, t in zip(words, terms) if t not in self._vocab])
        if not fuzzy:
            return Hits([])
        stand_ins = [self._words[w] for ws in fuzzy.values() for w in ws]
        return Hits(self._top(self._term_ids(stand_ins), n), fuzzy)

    def _term_ids(self, terms: Iterable[str]) -> list[int]:
        vocab = self._vocab
        return list(dict.fromkeys(vocab[t] for t in terms if t in vocab))

    def _top(self, qids: list[int], n: int) -> list[tuple[str, float]]:
        import numpy as np

        if n <= 0 or not qids or self._bm25 is None:
            return []
        s: np.ndarray = self._bm25.get_scores_from_ids(qids)
        cand = np.flatnonzero(s > 0)
        if cand.size == 0:
            return []
        if cand.size > n:
            cs = s[cand]
            thr = np.partition(cs, cand.size - n)[cand.size - n]
            cand = cand[cs >= thr]  # every tie at the threshold: ties stay in corpus order
        cs = s[cand]
        order = np.lexsort((cand, -cs))[:n]
        ids = self.ids
        return [(ids[i], float(s[i])) for i in cand[order].tolist()]

    def _close_words(self, unknown: list[str]) -> dict[str, list[str]]:
        """Each unknown word → the corpus words most like it (rapidfuzz), best first."""
        try:
            from rapidfuzz import fuzz, process
        except ImportError:  # pragma: no cover - a runtime dependency; guarded for odd installs
            return {}
        if self._word_list is None:
            self._word_list = list(self._words)
        out: dict[str, list[str]] = {}
        for word in dict.fromkeys(unknown):
            if len(word) < 3:
                continue  # "zu", "de": anything is "close" to two letters
            found = process.extract(
                word, self._word_list, scorer=fuzz.ratio, score_cutoff=FUZZY_CUTOFF, limit=FUZZY_LIMIT
            )
            if found:
                out[word] = [w for w, _score, _i in found]
        return out

    # -- browse ------------------------------------------------------------------------
    def browse(self, limit: int) -> list[str]:
        """The first ``limit`` chunk ids by document (documents by name, chunks in corpus
        order within each): what an empty query lists."""
        docs = self.docs
        order = sorted(range(len(self.ids)), key=lambda i: docs[i])
        ids = self.ids
        return [ids[i] for i in order[:limit]]
