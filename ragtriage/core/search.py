"""Lexical (BM25) search over chunks: the builtin retriever and the chunk picker.

Tokens are Unicode word runs (``\\w+``), NFC-normalised and lower-cased; accents
are kept, so ``garantía`` matches ``garantía`` (and ``Garantía``) but not
``garantia``. With a ``language`` the common words of that language are dropped
on both sides. Scoring is ``bm25s`` (numpy only); ties are broken by corpus
order, so a search is deterministic run to run.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping

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

            words = frozenset(_fold(w) for w in getattr(sw, name, ()))
        _stopword_cache[lang] = words
    return _stopword_cache[lang]


def _fold(text: str) -> str:
    if not text.isascii():
        text = unicodedata.normalize("NFC", text)
    return text.lower()


def tokenize(text: str, stop: frozenset[str] = frozenset()) -> list[str]:
    """Word tokens of ``text``: NFC, lower-cased, accents kept, stop words dropped."""
    toks = _TOKEN.findall(_fold(text))
    if stop:
        return [t for t in toks if t not in stop]
    return toks


class LexicalIndex:
    """BM25 index over chunk texts. Build once, search many times."""

    def __init__(
        self, ids: list[str], bm25, vocab: dict[str, int], stop: frozenset[str], language: str | None
    ):
        self.ids = ids
        self._bm25 = bm25
        self._vocab = vocab
        self._stop = stop
        self.language = language

    def __len__(self) -> int:
        return len(self.ids)

    @classmethod
    def build(cls, chunks: Iterable | Mapping, language: str | None = None) -> LexicalIndex:
        """Index an iterable of :class:`~ragtriage.core.corpus.Chunk` (or a Corpus, or
        ``(id, text)`` pairs), in the order given."""
        import bm25s
        from bm25s.tokenization import Tokenized

        if isinstance(chunks, Mapping):
            chunks = chunks.values()
        stop = stopwords(language)
        ids: list[str] = []
        doc_tokens: list[list[int]] = []
        vocab: dict[str, int] = {}
        setdefault = vocab.setdefault
        findall = _TOKEN.findall
        for c in chunks:
            if isinstance(c, tuple):
                cid, text = c
            else:
                cid, text = c.id, c.text
            ids.append(cid)
            toks = findall(_fold(text))
            if stop:
                toks = [t for t in toks if t not in stop]
            doc_tokens.append([setdefault(t, len(vocab)) for t in toks])
        bm25 = bm25s.BM25()
        if ids:
            bm25.index(Tokenized(ids=doc_tokens, vocab=vocab), show_progress=False)
        return cls(ids, bm25 if ids else None, vocab, stop, language)

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every chunk for ``query`` (float32 array in corpus order)."""
        n = len(self.ids)
        if not n:
            return np.zeros(0, dtype=np.float32)
        qids = []
        seen = set()
        for t in tokenize(query, self._stop):
            i = self._vocab.get(t)
            if i is not None and i not in seen:
                seen.add(i)
                qids.append(i)
        if not qids:
            return np.zeros(n, dtype=np.float32)
        return self._bm25.get_scores_from_ids(qids)

    def search(self, query: str, n: int = 10) -> list[tuple[str, float]]:
        """The best ``n`` chunks with a positive score: ``[(chunk id, score), ...]``,
        best first; equal scores keep corpus order."""
        if n <= 0 or not self.ids:
            return []
        s = self.scores(query)
        cand = np.flatnonzero(s > 0)
        if cand.size == 0:
            return []
        if cand.size > n:
            cs = s[cand]
            thr = np.partition(cs, cand.size - n)[cand.size - n]
            cand = cand[cs >= thr]  # every tie at the threshold, so the tie order stays corpus order
        cs = s[cand]
        order = np.lexsort((cand, -cs))[:n]
        ids = self.ids
        return [(ids[i], float(s[i])) for i in cand[order].tolist()]
