"""find_numbers's scan reads the unit in the same regex pass as the number; it must read
exactly what the plain two-step reading (number, then ``_unit_after`` /
``_unit_before``) reads, on every kind of text. (Joining number words and reading halves
and fractions come after the scan: ``tests/core/test_grounding_numbers.py``.)"""

from __future__ import annotations

import random
import re
import unicodedata

import pytest

from ragtriage.core import numbers as N


def reference_find_numbers(text, language=None):
    """The plain reading: scan numbers, then look for a unit after (or a symbol before) each."""
    if not text:
        return []
    if not text.isascii():
        text = unicodedata.normalize("NFC", text)
    lower = text.lower()
    if len(lower) != len(text):
        lower = "".join(ch if len(ch.lower()) != 1 else ch.lower() for ch in text)
    pat, values = N._scanner(language)
    out = []
    for m in pat.finditer(lower):
        tok = m.group(1)
        if tok is not None:
            start = m.start()
            if start and lower[start - 1] == "_":  # after a name with digits in it (x86_64): not a number
                name = re.search(r"\w*\Z", lower[: start - 1]).group()
                if any(ch.isdigit() for ch in name):
                    continue
            places = 0
            if tok.isdigit():
                value = int(tok)
            else:
                value = N.parse_number(tok, language)
                if value is None:
                    value, places = tok, None
                else:
                    places = max(0, -value.as_tuple().exponent)
                    value = value.normalize()
            unit = N._unit_after(lower, m.end()) or N._unit_before(lower, m.start())
            if N.negative_sign(lower, start) and not isinstance(value, str):
                value, tok, start = -value, text[start - 1] + tok, start - 1
            out.append(N.Number(value, unit, tok, start, places))
        else:
            a, b = m.span()
            out.append(N.Number(values[m.group(2)], N._unit_after(lower, b), text[a:b], a, None))
    return out


def scan(text, language):
    if not text:
        return []
    if not text.isascii():
        text = unicodedata.normalize("NFC", text)
    lower = text.lower()
    if len(lower) != len(text):
        lower = "".join(ch if len(ch.lower()) != 1 else ch.lower() for ch in text)
    return N._scan(text, lower, language)[0]


PIECES = (
    ["5", "14", "1.000", "1,5", "2.500,75", "1,000", "1.5", "3.", "0,5", "12,345.6", "007", "1.2.3", "99,"]
    + ["3.10", "2.0.1", "gentoo_0.9", "x86_64", "v2.0", "utf8", "_5", "a_1"]
    + [w for lang in ("es", "de", "en", "nl") for w in list(N.number_words(lang))[:25]]
    + list(N.UNITS)
    + [a.upper() for a in list(N.UNITS)[::5]]
    + ["€", "$", "£", "%"]
    + [
        "la",
        "entrega",
        "cuesta",
        "días",
        "Tage",
        "İstanbul",
        "STRASSE",
        "ß",
        "ﬁve",
        "über",
        "und",
        "y",
        "and",
    ]
    + [".", ",", ";", ":", "!", "?", "(", ")", "[a-1]", "-", "—", "«", "»", "'", "’"]
)
SPACES = [" ", " ", " ", "", "  ", "\u00a0", "\t", "\n", " \n"]


def random_text(r: random.Random) -> str:
    out = []
    for _ in range(r.randrange(1, 14)):
        out.append(r.choice(PIECES))
        out.append(r.choice(SPACES))
    t = "".join(out)
    return t.title() if r.random() < 0.1 else t


@pytest.mark.parametrize("language", ["es", "de", "en", "nl", "fr", None])
def test_one_pass_reads_as_the_two_step_reading(language):
    r = random.Random(f"numbers-{language}")
    texts = [random_text(r) for _ in range(4000)]
    texts += [
        "5 días hábiles",
        "5 días hábil",
        "5 business days",
        "5 business",
        "30 por ciento",
        "30 por",
        "€ 5",
        "€5",
        "€\n5",
        "5 €",
        "5€",
        "cinco días",
        "5  €",
        "5\u00a0€",
        "fünf Werktage",
        "5 $ 6",
        "İ 5 İ",
        "5 İstanbul",
        "drei\tTage",
        "1.000 € und 2 %",
        "5 dólares",
        "twenty-one days",
    ]
    for t in texts:
        assert scan(t, language) == reference_find_numbers(t, language), t
