"""Lexical (BM25) search over chunks: the one index of the chunk picker and the builtin retriever.

Both search the same :class:`LexicalIndex`, so what the picker finds for a question
is what a ``builtin`` run retrieves for it. Terms come from
:mod:`ragtriage.core.analysis` (folded, stemmed in the test set's language,
separable verbs and compounds read, the question widened with the language's
synonyms at a lower weight). Scoring is ``bm25s`` (numpy only); ties are broken
by corpus order, so a search is deterministic run to run.

The picker adds two things a run never uses: when no word of the question is in
the corpus, the closest words of the corpus are searched instead (rapidfuzz,
:meth:`LexicalIndex.hits` says which), and an empty query browses the corpus by
document (:meth:`LexicalIndex.browse`).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from itertools import chain
from typing import TYPE_CHECKING, Any

from .analysis import EXTRA_WEIGHT, Analyzer, fold

if TYPE_CHECKING:
    import numpy as np

_TOKEN = re.compile(r"\w+")

_STOPWORD_LISTS = {
    "en": "STOPWORDS_EN",
    "de": "STOPWORDS_GERMAN",
    "es": "STOPWORDS_SPANISH",
    "nl": "STOPWORDS_DUTCH",
    "fr": "STOPWORDS_FRENCH",
    "pt": "STOPWORDS_PORTUGUESE",
    "it": "STOPWORDS_ITALIAN",
}
_stopword_cache: dict[str, frozenset[str]] = {}

#: the least rapidfuzz ``ratio`` (0–100) a corpus word needs to stand in for an unknown query word
FUZZY_CUTOFF = 75.0
#: at most this many corpus words stand in for one unknown query word
FUZZY_LIMIT = 3


def stopwords(language: str | None) -> frozenset[str]:
    """Common words of ``language`` (two-letter code), lower-cased; empty if unknown."""
    if not language:
        return frozenset()
    lang = language.lower().split("-")[0].split("_")[0]
    if lang not in _stopword_cache:
        name = _STOPWORD_LISTS.get(lang)
        words: frozenset[str] = frozenset()
        if name:
            from bm25s import stopwords as sw

            words = frozenset(_lower(w) for w in getattr(sw, name, ()))
        _stopword_cache[lang] = words
    return _stopword_cache[lang]


def _lower(text: str) -> str:
    if not text.isascii():
        text = unicodedata.normalize("NFC", text)
    return text.lower()


def tokenize(text: str, stop: frozenset[str] = frozenset()) -> list[str]:
    """Word tokens of ``text``: NFC, lower-cased, accents kept, stop words dropped (the
    builtin answerer compares sentences with these; search uses :mod:`.analysis`)."""
    toks = _TOKEN.findall(_lower(text))
    if stop:
        return [t for t in toks if t not in stop]
    return toks


@dataclass
class Hits:
    """A search's ranked chunks, and how they were found."""

    results: list[tuple[str, float]]
    #: unknown query word → the corpus words searched instead (empty unless the fallback ran)
    fuzzy: dict[str, list[str]] = field(default_factory=dict)


class LexicalIndex:
    """BM25 over the analysed terms of every chunk. Build once (in a worker), search often."""

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
    def build(cls, chunks: Iterable[Any] | Mapping[str, Any], language: str | None = None) -> LexicalIndex:
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
        distinct = list(dict.fromkeys(chain.from_iterable(doc_words)))  # first-seen order
        analyzer.learn(distinct)  # the words a compound's parts may be
        parts = {w: analyzer.parts(w) for w in distinct} if analyzer.language in ("de", "nl") else {}
        if parts:
            doc_words = [ws + [p for w in ws for p in parts[w]] for ws in doc_words]
            distinct = list(dict.fromkeys(chain.from_iterable(doc_words)))
        # stem each distinct word once (PyStemmer on a batch), then map words → term ids
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
    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every chunk for ``query`` (float array in corpus order): the typed
        terms, plus the added ones (synonyms, compound parts) at :data:`EXTRA_WEIGHT`."""
        import numpy as np

        n = len(self.ids)
        q = self.analyzer.query(query)
        typed, extra = self._term_ids(q.terms), self._term_ids(q.extra)
        extra = [i for i in extra if i not in typed]
        out = np.zeros(n, dtype=np.float64)
        if self._bm25 is None:
            return out
        if typed:
            out += self._bm25.get_scores_from_ids(typed)
        if extra:
            out += EXTRA_WEIGHT * self._bm25.get_scores_from_ids(extra)
        return out

    def search(self, query: str, n: int = 10) -> list[tuple[str, float]]:
        """The best ``n`` chunks with a positive score: ``[(chunk id, score), ...]``,
        best first; equal scores keep corpus order."""
        if n <= 0 or not self.ids:
            return []
        return self._top(self.scores(query), n)

    def hits(self, query: str, n: int = 30) -> Hits:
        """The picker's search: :meth:`search`, and when no word of the query is in the
        corpus, the closest corpus words instead (:attr:`Hits.fuzzy` names them)."""
        results = self.search(query, n)
        if results:
            return Hits(results)
        words = self.analyzer.query(query).words
        if not words:
            return Hits([])
        terms = self.analyzer.stem_words(words)
        fuzzy = self._close_words([w for w, t in zip(words, terms) if t not in self._vocab])
        if not fuzzy or self._bm25 is None:
            return Hits([])
        stand_ins = self._term_ids(self._words[w] for ws in fuzzy.values() for w in ws)
        if not stand_ins:
            return Hits([], fuzzy)
        return Hits(self._top(self._bm25.get_scores_from_ids(stand_ins), n), fuzzy)

    def _term_ids(self, terms: Iterable[str]) -> list[int]:
        vocab = self._vocab
        return list(dict.fromkeys(vocab[t] for t in terms if t in vocab))

    def _top(self, s: np.ndarray, n: int) -> list[tuple[str, float]]:
        import numpy as np

        cand = np.flatnonzero(s > 0)
        if n <= 0 or cand.size == 0:
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


__all__ = ["FUZZY_CUTOFF", "Hits", "LexicalIndex", "fold", "stopwords", "tokenize"]
