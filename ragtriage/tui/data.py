"""Plain data the app needs from files and from the core, without Textual.

Each function here runs in a worker thread: the run file's reasons, the stale
labels (``ragtriage.core.staleness`` when present, a plain fallback otherwise)
and the lexical index for the chunk picker (``ragtriage.core.search``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from ..core.errors import InputError, Problem
from ..core.text import fingerprint, normalize_text


def read_reasons(path) -> dict[str, str]:
    """case id -> diagnosis reason, from a run file (formats.md §4)."""
    path = Path(path)
    reasons: dict[str, str] = {}
    try:
        f = open(path, "rb")
    except OSError as e:
        raise InputError(Problem(str(path), None, f"run file not readable ({e.strerror or e})")) from None
    with f:
        for lineno, raw in enumerate(f, 1):
            if not raw.strip():
                continue
            try:
                obj = orjson.loads(raw)
            except orjson.JSONDecodeError:
                raise InputError(
                    Problem(str(path), lineno, "not valid JSON (a run file has one JSON object per line)")
                ) from None
            if isinstance(obj, dict) and obj.get("type", "case") == "case" and "id" in obj:
                reason = obj.get("reason")
                if isinstance(reason, str):
                    reasons[str(obj["id"])] = reason
    return reasons


@dataclass
class StaleEntry:
    """One stale label of one case (staleness.md)."""

    case: str
    label: str
    status: str
    candidates: list[tuple[str, float]] = field(default_factory=list)
    fix: str | None = None
    expect: str | None = None  # proposed `expect` ("all" for a split)


def _entry(raw) -> StaleEntry:
    get = raw.get if isinstance(raw, dict) else (lambda k, d=None: getattr(raw, k, d))
    cands = []
    for c in get("candidates", None) or []:
        if isinstance(c, dict):
            cands.append((c["id"], float(c.get("score", 0.0) or 0.0)))
        elif isinstance(c, (tuple, list)):
            cands.append((c[0], float(c[1]) if len(c) > 1 and c[1] is not None else 0.0))
        else:
            cands.append((c.id, float(getattr(c, "score", 0.0) or 0.0)))
    return StaleEntry(get("case"), get("label"), get("status"), cands, get("fix", None), get("expect", None))


def find_stale(doc, corpus, corpus_path=None) -> list[StaleEntry]:
    """Every label that is not ``ok`` against ``corpus``.

    Uses the staleness engine when it is installed; otherwise a plain check:
    an expected id absent from the corpus (``missing``) or whose text no longer
    matches its remembered fingerprint (``changed``)."""
    try:
        from ..core import staleness
    except ImportError:
        staleness = None
    if staleness is not None and hasattr(staleness, "check"):
        report = staleness.check(doc, corpus)  # the loaded corpus: no second read of the file
        raw = getattr(report, "stale", None)
        if raw is None:
            raw = [
                e
                for e in (getattr(report, "labels", None) or report.get("labels", []))
                if (e.get("status") if isinstance(e, dict) else e.status) != "ok"
            ]
        return [e for e in map(_entry, raw) if e.status not in ("ok", "unrecorded")]
    out: list[StaleEntry] = []
    labels = doc.labels
    for case in doc.cases:
        for cid in case.expected:
            label = labels.get(cid)
            chunk = corpus.get(cid)
            if chunk is None:
                status = "missing" if label is not None and label.text else "unknown"
                out.append(
                    StaleEntry(
                        case.id,
                        cid,
                        status,
                        _similar(corpus, label.text if label and label.text else case.question),
                    )
                )
            elif label is not None and label.sha and label.sha != fingerprint(chunk.text):
                out.append(StaleEntry(case.id, cid, "changed", _similar(corpus, label.text or case.question)))
    return out


_TOKEN = re.compile(r"\w+")


def _similar(corpus, text: str, n: int = 5) -> list[tuple[str, float]]:
    """Chunks sharing the most words with ``text`` (fallback only; small corpora)."""
    words = set(_TOKEN.findall(normalize_text(text or "")))
    if not words or len(corpus) > 200_000:
        return []
    scored = []
    for cid, chunk in corpus.items():
        common = len(words & set(_TOKEN.findall(normalize_text(chunk.text))))
        if common:
            scored.append((common / len(words), cid))
    scored.sort(key=lambda t: (-t[0], t[1]))
    return [(cid, round(score, 3)) for score, cid in scored[:n]]


class _FallbackIndex:
    """Word-overlap search used only when ``ragtriage.core.search`` is absent."""

    def __init__(self, chunks):
        self.ids = []
        self.postings: dict[str, list[int]] = {}
        for i, c in enumerate(chunks):
            self.ids.append(c.id)
            for w in set(_TOKEN.findall(normalize_text(c.text))):
                self.postings.setdefault(w, []).append(i)

    @classmethod
    def build(cls, chunks):
        return cls(chunks)

    def search(self, query: str, n: int = 10) -> list[tuple[str, float]]:
        import math

        scores: dict[int, float] = {}
        total = len(self.ids) or 1
        for w in set(_TOKEN.findall(normalize_text(query))):
            post = self.postings.get(w)
            if not post:
                continue
            idf = math.log(1 + total / len(post))
            for i in post:
                scores[i] = scores.get(i, 0.0) + idf
        best = sorted(scores.items(), key=lambda t: (-t[1], t[0]))[:n]
        return [(self.ids[i], s) for i, s in best]


def build_index(corpus, language: str | None = None):
    """The lexical index over every chunk of ``corpus`` (slow on big corpora: call in a worker)."""
    try:
        from ..core.search import LexicalIndex
    except ImportError:
        return _FallbackIndex.build(list(corpus.values()))
    return LexicalIndex.build(corpus, language=language)


def preview_cases(path, limit: int = 400, max_bytes: int = 1 << 18) -> list:
    """The first cases of a big test set, read from its first bytes only.

    Lets the app paint rows at once while the whole document loads in the
    background (seconds at 100k cases). Best effort: any surprise -> []."""
    import yaml

    from ..core.schema import Case

    try:
        with open(path, "rb") as f:
            head = f.read(max_bytes).decode("utf-8", errors="ignore").lstrip("\ufeff")
        m = re.search(r"(?m)^cases:[ \t]*(#.*)?\n", head)
        if not m:
            return []
        body = head[m.end() :]
        first = re.match(r"([ \t]*)- ", body)
        if not first:
            return []
        starts = [x.start() for x in re.finditer(rf"(?m)^{re.escape(first.group(1))}- ", body)]
        if len(starts) < 2:
            return []
        cut = starts[min(limit, len(starts) - 1)]  # the last item may be cut off: leave it out
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        items = yaml.load(body[:cut], Loader=loader)
        out = []
        for item in items or ():
            if not isinstance(item, dict):
                return []
            out.append(Case(**item))
        return out
    except Exception:
        return []
