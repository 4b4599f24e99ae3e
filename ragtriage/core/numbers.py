"""Numbers in text, read as numbers: digits with the language's separators,
small number words (es, de, en, nl), and the unit written next to them.

Used by the grounding check: ``14.`` at the end of a sentence is 14; in Spanish,
German and Dutch ``1.000`` is a thousand and ``1,5`` one and a half, in English
``1,000`` is a thousand; ``cinco``, ``fünf``, ``five`` and ``vijf`` are 5; a unit
(``€``, ``días``, ``Tage``, ``%`` ...) is normalised so ``5 días`` and ``cinco
días`` agree and ``5 €`` does not.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable
from decimal import Decimal
from functools import lru_cache
from typing import NamedTuple, TypeAlias

from .numwords import AND_HALF, FRACTIONS, HALF_WORDS, HALVES, JOINERS, NUMERATORS, _lang, number_words

# ----------------------------------------------------------------------------- units

_UNIT_ALIASES = {
    "EUR": ["€", "eur", "euro", "euros", "eurocent"],
    "USD": ["$", "usd", "dollar", "dollars", "dólar", "dólares", "dolar", "dolares"],
    "GBP": ["£", "gbp", "pound", "pounds", "pfund", "libra", "libras"],
    "CENT": ["cent", "cents", "céntimo", "céntimos", "centimo", "centimos", "ct", "cts"],
    "%": ["%", "percent", "per cent", "por ciento", "prozent", "procent", "pct"],
    "day": [
        "día",
        "días",
        "dia",
        "dias",
        "day",
        "days",
        "tag",
        "tage",
        "tagen",
        "tages",
        "dag",
        "dagen",
        "werktag",
        "werktage",
        "werktagen",
        "werkdag",
        "werkdagen",
        "business day",
        "business days",
        "working day",
        "working days",
        "días hábiles",
        "dias habiles",
        "días laborables",
    ],
    "week": ["semana", "semanas", "week", "weeks", "woche", "wochen", "weken"],
    "month": ["mes", "meses", "month", "months", "monat", "monate", "monaten", "maand", "maanden"],
    "year": ["año", "años", "ano", "anos", "year", "years", "jahr", "jahre", "jahren", "jaar", "jaren"],
    "hour": ["h", "hora", "horas", "hour", "hours", "hr", "hrs", "stunde", "stunden", "std", "uur", "uren"],
    "minute": ["min", "mins", "minuto", "minutos", "minute", "minutes", "minuten", "minuut"],
    "second": [
        "s",
        "seg",
        "segundo",
        "segundos",
        "sec",
        "second",
        "seconds",
        "sekunde",
        "sekunden",
        "seconde",
        "seconden",
    ],
    "km": [
        "km",
        "kilómetro",
        "kilómetros",
        "kilometro",
        "kilometros",
        "kilometer",
        "kilometers",
        "kilometre",
        "kilometres",
    ],
    "m": ["m", "metro", "metros", "meter", "meters", "metre", "metres"],
    "cm": ["cm"],
    "mm": ["mm"],
    "kg": ["kg", "kilo", "kilos", "kilogramo", "kilogramos", "kilogramm", "kilogram", "kilograms"],
    "g": ["g", "gr", "gramo", "gramos", "gramm", "gram", "grams"],
    "l": ["l", "litro", "litros", "liter", "liters", "litre", "litres"],
    "ml": ["ml"],
    "GB": ["gb"],
    "MB": ["mb"],
    "TB": ["tb"],
    "KB": ["kb"],
}
UNITS: dict[str, str] = {}
for canon, aliases in _UNIT_ALIASES.items():
    for a in aliases:
        UNITS[a] = canon
_SYMBOLS = {"€": "EUR", "$": "USD", "£": "GBP", "%": "%"}
_CURRENCY = {"€": "EUR", "$": "USD", "£": "GBP"}  # the symbols read before a number

# ----------------------------------------------------------------------------- reading

_SEPS = re.compile(r"([.,])")
# digits not glued to a letter or digit before them (``utf8``, ``x86``: part of a name), nor
# to a separator; ``_`` may stand before them (``gentoo_0.9.13``), and a version's ``v`` (``v2.0``)
_NOT_GLUED = r"(?:(?<![\w.,])|(?<=_)|(?<=(?<!\w)[vV]))"
_DIGITS = re.compile(_NOT_GLUED + r"(\d+(?:[.,]\d+)*)")
_WORD = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)?")
_BEFORE = re.compile(r"([€$£])\s?$")


_MINUS = "-\u2212"  # hyphen-minus, minus sign
_BEFORE_SIGN = frozenset(" \t\n\r\u00a0([{:=")  # what may stand before a minus that is a sign


def negative_sign(lower: str, start: int) -> bool:
    """A minus written right before the digits at ``start``, itself at the start of the text or
    after a space or an opening bracket: ``-5``, ``(-5)``; not ``3-5`` or ``a-1``."""
    return bool(start) and lower[start - 1] in _MINUS and (start == 1 or lower[start - 2] in _BEFORE_SIGN)


class Number(NamedTuple):
    # digits alone are an int (equal to the Decimal); a version (``2.0.1``, ``0.9.13``)
    # is its text: not a quantity
    value: int | Decimal | str
    unit: str | None  # canonical unit, or None when the text gives none
    text: str  # as written (``14``, ``1.000``, ``cinco``)
    start: int
    places: int | None = None  # decimals as written (``3.10``: 2, ``3.1``: 1, ``14``: 0); words: None


_MONEY = frozenset({"EUR", "USD", "GBP", "CENT"})


def same_number(a: Number, b: Number) -> bool:
    """Do two numbers of equal ``value`` say the same? Written decimals count (``3.1`` is not
    ``3.10``: a version, a section), except for money (``2,50 €`` is ``2,5 €``) and words."""
    if a.places is None or b.places is None or a.places == b.places:
        return True
    return a.unit in _MONEY or b.unit in _MONEY


@lru_cache(maxsize=64)
def decimal_separator(language: str | None) -> str:
    """``,`` for es, de, nl, fr, it, pt ...; ``.`` for en (and unknown languages)."""
    return "." if _lang(language) in ("en", "ja", "zh", "ko", "he", "th") else ","


def parse_number(token: str, language: str | None = None) -> Decimal | None:
    """``1.000`` -> 1000 (es), ``1,000`` -> 1000 (en), ``1,5`` -> 1.5 (es), ``14`` -> 14.

    A separator followed by exactly three digits, in the language's thousands
    style, groups thousands; any other separator is read as the decimal point."""
    dec = decimal_separator(language)
    thou = "." if dec == "," else ","
    if token.isdigit():
        return Decimal(token)
    parts = _SEPS.split(token)
    digits = parts[0::2]
    seps = parts[1::2]
    if not seps:
        return Decimal(token)
    # thousands grouping: every separator is the thousands one, every group after the first has 3 digits
    if all(s == thou for s in seps) and all(len(d) == 3 for d in digits[1:]) and len(digits[0]) <= 3:
        return Decimal("".join(digits))
    # one decimal separator at the end, thousands groups before it
    if seps[-1] == dec and all(s == thou for s in seps[:-1]) and all(len(d) == 3 for d in digits[1:-1]):
        return Decimal("".join(digits[:-1]) + "." + digits[-1])
    if len(seps) == 1:  # the other style's decimal point ("1.5" in a Spanish text)
        return Decimal(digits[0] + "." + digits[1])
    return None  # two separators that group no thousands: a version (2.0.1), not a quantity


_AFTER1 = re.compile(r"\s?(?:([€$£%])|([^\W\d_]+))")
_SECOND = re.compile(r"\s([^\W\d_]+)")
_FIRST_OF_TWO = {a.split(" ")[0] for a in UNITS if " " in a}


def _unit_after(text: str, end: int) -> str | None:
    """The unit written right after a number (``5 €``, ``5%``, ``cinco días``), canonical."""
    m = _AFTER1.match(text, end)
    if m is None:
        return None
    sym = m.group(1)
    if sym:
        return _SYMBOLS[sym]
    word = m.group(2).lower()
    if word in _FIRST_OF_TWO:
        m2 = _SECOND.match(text, m.end())
        if m2 is not None:
            unit = UNITS.get(word + " " + m2.group(1).lower())
            if unit is not None:
                return unit
    return UNITS.get(word)


def _unit_before(text: str, start: int) -> str | None:
    m = _BEFORE.search(text, max(0, start - 2), start)
    return _SYMBOLS[m.group(1)] if m else None


# a letter -> the trie of what may follow it; the key "" marks where a word ends
_Trie: TypeAlias = dict[str, "_Trie"]


def _trie(words: Iterable[str]) -> _Trie:
    trie: _Trie = {}
    for w in words:
        node = trie
        for ch in w:
            node = node.setdefault(ch, {})
        node[""] = {}
    return trie


def _trie_node_regex(node: _Trie) -> str:
    end = "" in node
    alts = [re.escape(ch) + _trie_node_regex(sub) for ch, sub in sorted(node.items()) if ch]
    if not alts:
        return ""
    if len(alts) == 1 and not end:
        return alts[0]
    group = "(?:" + "|".join(alts) + ")"
    return group + "?" if end else group


def _trie_regex(words: Iterable[str]) -> str:
    """A regex alternation shaped as a trie: at each position only the branch of the
    next letter is tried (3x faster than a flat alternation of 60 words)."""
    return _trie_node_regex(_trie(words))


@lru_cache(maxsize=32)
def _words(language: str | None) -> tuple[re.Pattern[str], dict[str, int]]:
    """The number-word scanner of a language (on lower-cased text) and the values."""
    values = number_words(language)
    return re.compile(r"\b(" + _trie_regex(values) + r")\b"), values


@lru_cache(maxsize=32)
def _scanner(language: str | None) -> tuple[re.Pattern[str], dict[str, int]]:
    """Digits or a whole number word, in one pass over lower-cased text."""
    values = number_words(language)
    pat = re.compile(_NOT_GLUED + r"(\d+(?:[.,]\d+)*)|\b(" + _trie_regex(values) + r")\b")
    return pat, values


# What may follow a number, read in the same pass (a lookahead, so it consumes
# nothing): a symbol, or a word and the word after it (two-word units). The same
# reading as ``_unit_after``, without a second regex call per number.
_AFTER_LOOK = r"(?:(?=\s?(?:([€$£%])|([^\W\d_]+)(?:\s([^\W\d_]+))?)))?"


@lru_cache(maxsize=32)
def _scanner_units(language: str | None) -> tuple[re.Pattern[str], dict[str, int]]:
    """:func:`_scanner` in a faster shape, also capturing what follows each number.

    The same matches as ``_scanner`` (a test holds them equal), written to start
    with one character class — a digit or the first letter of a number word — so
    the regex engine skips every other position without entering the pattern:

    - digits: the first digit taken, then "no word character, dot or comma before it"
      checked behind it; group 1 is that first digit (it marks the branch);
    - words: the first letter taken, "no word character before it" checked behind
      it, then the rest of the trie under that letter, then a word boundary.

    The whole match (group 0) is the number as written; groups 2-4 are what
    follows it (``_AFTER_LOOK``)."""
    values = number_words(language)
    trie = _trie(values)
    firsts = sorted(ch for ch in trie if ch)
    words = "|".join(f"(?<={re.escape(ch)})" + _trie_node_regex(trie[ch]) for ch in firsts)
    pat = (
        "[\\d"
        + "".join(re.escape(ch) for ch in firsts)
        + "]"
        + r"(?:(?<=(\d))(?:(?<![\w.,]\d)|(?<=_\d)|(?<=(?<!\w)[vV]\d))\d*(?:[.,]\d+)*|(?<!\w.)(?:"
        + words
        + r")\b)"
        + _AFTER_LOOK
    )
    return re.compile(pat), values


def find_numbers(text: str, language: str | None = None) -> list[Number]:
    """Every number in ``text`` (digits and number words), with its unit if one is written.

    Number words next to each other that make one number are one (``six hundred``,
    ``dos mil quinientos``, ``treinta y dos``, ``zwei Millionen``); halves and simple
    fractions in words are numbers (``one and a half``, ``zweieinhalb``, ``media hora``,
    ``three quarters``); digits after ``_`` are a number when a word stands before it
    (``gentoo_0.9.13``, not ``x86_64``); digits with two separators that group no
    thousands are a version, compared as written (``2.0.1``)."""
    if not text:
        return []
    if not text.isascii():
        text = unicodedata.normalize("NFC", text)
    lower = text.lower()
    if len(lower) != len(text):  # a letter whose lower case is longer (İ): keep offsets honest
        lower = "".join(ch if len(ch.lower()) != 1 else ch.lower() for ch in text)
    out, words = _scan(text, lower, language)
    lang, hints = _hints(language)
    if words and len(out) > 1:
        out = _joined(out, text, lower, lang)
    if hints is not None and hints(lower):
        out = _with_fractions(out, text, lower, lang)
    return out


@lru_cache(maxsize=32)
def _hints(language: str | None) -> tuple[str, Callable[[str], re.Match[str] | None] | None]:
    """The language, and a search for what a text holding a half or a fraction in words must
    contain (most texts do not: one C-level search)."""
    lang = _lang(language)
    words = _FRACTION_HINTS.get(lang)
    return lang, (re.compile("|".join(words)).search if words else None)


def _scan(text: str, lower: str, language: str | None) -> tuple[list[Number], bool]:
    """One pass of the scanner: every digit string and number word, with its unit; and
    whether any number word was met (``text`` NFC, ``lower`` its lower case)."""
    pat, values = _scanner_units(language)
    out: list[Number] = []
    new = tuple.__new__
    units = UNITS
    unit: str | None
    value: int | Decimal | str
    words = False
    for m in pat.finditer(lower):
        digit, sym, after, second = m.groups()
        if sym:
            unit = _SYMBOLS[sym]
        elif after is not None:  # as _unit_after reads it
            w = after.lower()
            if second is not None and w in _FIRST_OF_TWO:
                unit = units.get(w + " " + second.lower()) or units.get(w)
            else:
                unit = units.get(w)
        else:
            unit = None
        if digit is not None:
            tok = m.group()
            start = m.start()
            if start and lower[start - 1] == "_" and _after_a_name(lower, start - 1):
                continue  # x86_64, py3_10: part of a name
            places: int | None = 0
            if tok.isdigit():
                value = int(tok)  # equal (and hash-equal) to the same Decimal
            else:
                parsed = parse_number(tok, language)
                if parsed is None:
                    value, places = tok, None  # a version: as written
                else:
                    places = max(0, -int(parsed.as_tuple().exponent))
                    value = parsed.normalize()
            if (
                unit is None and start
            ):  # a currency symbol just before (``€5``, ``€ 5``), as _unit_before reads it
                c = lower[start - 1]
                if c in _CURRENCY:
                    unit = _CURRENCY[c]
                elif start > 1 and c.isspace() and lower[start - 2] in _CURRENCY:
                    unit = _CURRENCY[lower[start - 2]]
            if negative_sign(lower, start) and not isinstance(value, str):
                value = -value  # "-5 °C" is not "5 °C"; "3-5" (a range) and "a-1" (an id) are not signs
                tok = text[start - 1] + tok
                start -= 1
            out.append(new(Number, (value, unit, tok, start, places)))
        else:
            words = True
            a, b = m.span()
            out.append(new(Number, (values[lower[a:b]], unit, text[a:b], a, None)))
    return out, words


def _after_a_name(lower: str, at: int) -> bool:
    """Is the token that ends at ``at`` (an ``_``) a name with digits in it (``x86``, ``py3``)?"""
    i = at
    while i > 0 and (lower[i - 1].isalnum() or lower[i - 1] == "_"):
        i -= 1
    return any(ch.isdigit() for ch in lower[i:at])


# ----------------------------------------------------------------------------- words joined


def _joinable(gap: str, lang: str) -> str | None:
    """What stands between two number words: "" (a space or hyphen), the language's "and",
    or None when it is not part of a number."""
    g = gap.strip()
    if not g or g == "-":
        return "" if gap.count("\n") < 2 else None
    return g if g in JOINERS.get(lang, ()) and gap[0].isspace() and gap[-1].isspace() else None


def _joined(nums: list[Number], text: str, lower: str, lang: str) -> list[Number]:
    """Number words that make one number, as one: ``six hundred`` (6 x 100), ``dos mil
    quinientos`` (2 x 1000 + 500), ``treinta y dos`` (30 + 2), ``one hundred and twenty``,
    ``2 millones``. Words that do not combine (``five six``) stay apart."""
    out: list[Number] = []
    state: dict[int, tuple[int, int]] = {}  # id of a number made of words -> (total, current)
    for n in nums:
        prev = out[-1] if out else None
        if prev is not None and n.places is None and type(n.value) is int:
            gap = lower[prev.start + len(prev.text) : n.start]
            join = _joinable(gap, lang) if len(gap) <= 5 else None
            st = state.get(id(prev)) or _start(prev)
            nxt = _step(st, n.value, join, digits=prev.places is not None) if st is not None else None
            if nxt is not None:
                m = Number(
                    sum(nxt), n.unit, text[prev.start : n.start + len(n.text)], prev.start, prev.places
                )
                out[-1] = m
                state[id(m)] = nxt
                continue
        out.append(n)
    return out


_MULTIPLIERS = (1_000_000, 1000)


def _start(n: Number) -> tuple[int, int] | None:
    """(thousands and more, the part below a thousand) of a number that may go on in words."""
    v = n.value
    if type(v) is not int or v < 0 or (n.places is not None and n.places != 0):
        return None
    return (v - v % 1000, v % 1000) if n.places is None else (0, v)


def _step(st: tuple[int, int], v: int, join: str | None, digits: bool) -> tuple[int, int] | None:
    """The state after word ``v`` (the usual reading: ``current`` below a thousand, times a
    multiplier into ``total``), or None when ``v`` does not go on the number."""
    total, current = st
    if join is None:
        return None
    if v in _MULTIPLIERS:  # "dos mil", "two million three thousand"; not "three thousand two million"
        if join or not current or (total and total < v * 1000):
            return None
        return total + current * v, 0
    if digits:
        return None  # digits go on only with a multiplier ("2 millones", "3 thousand")
    if v == 100:  # "six hundred"
        return (total, current * 100) if not join and 0 < current < 10 else None
    if current == 0:  # after a multiplier: "mil veinticuatro", "dos mil quinientos"
        return (total, v) if total and v < 1000 else None
    if v < 100 and current % 100 == 0 and current < 1000:  # "cuatrocientos cincuenta", "hundred and ten"
        return total, current + v
    if v < 10 and current % 10 == 0 and 20 <= current % 100:  # "treinta y dos", "twenty five"
        return total, current + v
    return None


# ----------------------------------------------------------------------------- halves, fractions

_FRACTION_HINTS = {
    "en": ("half", "quarter", "third"),
    "es": ("medi", "cuarto", "tercio"),
    "de": ("halb", "viertel", "drittel"),
    "nl": ("half", "halve", "kwart", "derde"),
}


@lru_cache(maxsize=8)
def _fraction_patterns(
    lang: str,
) -> tuple[re.Pattern[str] | None, re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """(one-word halves ``zweieinhalb``; N and a half; a half with a unit after it; a fraction)."""
    unit_words = "|".join(
        sorted((re.escape(u) for u in UNITS if u.isalpha() and len(u) > 1), key=len, reverse=True)
    )
    one = (
        re.compile(r"\b(" + "|".join(map(re.escape, sorted(HALVES[lang], key=len, reverse=True))) + r")\b")
        if HALVES[lang]
        else None
    )
    words = {**number_words(lang), **{a: v for a, v in NUMERATORS[lang].items() if v == 1}}
    nums = "|".join(sorted(map(re.escape, words), key=len, reverse=True))
    # "one and a half", "dos días y medio", "un año y medio": the unit may stand between
    and_half = re.compile(r"\b(\d+|" + nums + r")\s+(?:(" + unit_words + r")\s+)?" + AND_HALF[lang] + r"\b")
    half_unit = re.compile(
        r"\b(" + "|".join(HALF_WORDS[lang]) + r")\s+(?:(?:a|an)\s+)?(" + unit_words + r")\b"
    )
    frac = re.compile(
        r"\b(" + "|".join(map(re.escape, NUMERATORS[lang])) + r")[\s-]*(" + "|".join(FRACTIONS[lang]) + r")\b"
    )
    return one, and_half, half_unit, frac


def _with_fractions(nums: list[Number], text: str, lower: str, lang: str) -> list[Number]:
    """``nums`` with the halves and fractions written in words, in place of the words they hold."""
    one, and_half, half_unit, frac = _fraction_patterns(lang)
    found: list[Number] = []
    if one is not None:
        for m in one.finditer(lower):
            found.append(
                Number(
                    Decimal(HALVES[lang][m.group(1)]),
                    _unit_after(text, m.end()),
                    text[m.start() : m.end()],
                    m.start(),
                )
            )
    words = {**number_words(lang), **NUMERATORS[lang]}
    for m in and_half.finditer(lower):
        w, between = m.group(1), m.group(2)
        base = Decimal(w) if w.isdigit() else Decimal(words[w])
        unit = UNITS.get(between) if between else _unit_after(text, m.end())
        found.append(Number(base + Decimal("0.5"), unit, text[m.start() : m.end()], m.start()))
    for m in half_unit.finditer(lower):
        found.append(Number(Decimal("0.5"), UNITS.get(m.group(2)), text[m.start() : m.end()], m.start()))
    for m in frac.finditer(lower):
        value = Decimal(NUMERATORS[lang][m.group(1)]) / Decimal(FRACTIONS[lang][m.group(2)])
        found.append(Number(value, None, text[m.start() : m.end()], m.start()))
    if not found:
        return nums
    spans = [(f.start, f.start + len(f.text)) for f in found]
    kept = [n for n in nums if not any(a <= n.start < b for a, b in spans)]
    taken: list[Number] = []
    for f in sorted(found, key=lambda f: (f.start, -len(f.text))):
        if not taken or f.start >= taken[-1].start + len(taken[-1].text):
            taken.append(f)
    return sorted(kept + taken, key=lambda n: n.start)
