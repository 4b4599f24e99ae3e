"""Number words of es, de, en and nl: the single words, the compounds written as one word
(``einundzwanzig``, ``sechshundert``, ``zeshonderd``, ``seiscientos``), and the multipliers
that join words into one number (``six hundred``, ``dos mil quinientos``: see
:func:`ragtriage.core.numbers.find_numbers`).
"""

from __future__ import annotations

_UNITS_WORDS: dict[str, dict[str, int | None]] = {
    "es": {
        "cero": 0,
        "uno": 1,
        "dos": 2,
        "tres": 3,
        "cuatro": 4,
        "cinco": 5,
        "seis": 6,
        "siete": 7,
        "ocho": 8,
        "nueve": 9,
        "diez": 10,
        "once": 11,
        "doce": 12,
        "trece": 13,
        "catorce": 14,
        "quince": 15,
        "dieciséis": 16,
        "dieciseis": 16,
        "diecisiete": 17,
        "dieciocho": 18,
        "diecinueve": 19,
        "veinte": 20,
        "veintiuno": 21,
        "veintiún": 21,
        "veintidós": 22,
        "veintidos": 22,
        "veintitrés": 23,
        "veintitres": 23,
        "veinticuatro": 24,
        "veinticinco": 25,
        "veintiséis": 26,
        "veintiseis": 26,
        "veintisiete": 27,
        "veintiocho": 28,
        "veintinueve": 29,
        "treinta": 30,
        "cuarenta": 40,
        "cincuenta": 50,
        "sesenta": 60,
        "setenta": 70,
        "ochenta": 80,
        "noventa": 90,
        "cien": 100,
        "ciento": 100,
        "mil": 1000,
        "doble": None,
        "media": None,  # placeholders never matched (None is skipped)
    },
    "de": {
        "null": 0,
        "eins": 1,
        "zwei": 2,
        "zwo": 2,
        "drei": 3,
        "vier": 4,
        "fünf": 5,
        "sechs": 6,
        "sieben": 7,
        "acht": 8,
        "neun": 9,
        "zehn": 10,
        "elf": 11,
        "zwölf": 12,
        "dreizehn": 13,
        "vierzehn": 14,
        "fünfzehn": 15,
        "sechzehn": 16,
        "siebzehn": 17,
        "achtzehn": 18,
        "neunzehn": 19,
        "zwanzig": 20,
        "dreißig": 30,
        "dreissig": 30,
        "vierzig": 40,
        "fünfzig": 50,
        "sechzig": 60,
        "siebzig": 70,
        "achtzig": 80,
        "neunzig": 90,
        "hundert": 100,
        "einhundert": 100,
        "tausend": 1000,
        "eintausend": 1000,
    },
    "en": {
        "zero": 0,
        "one": 1,
        "two": 2,
        "three": 3,
        "four": 4,
        "five": 5,
        "six": 6,
        "seven": 7,
        "eight": 8,
        "nine": 9,
        "ten": 10,
        "eleven": 11,
        "twelve": 12,
        "thirteen": 13,
        "fourteen": 14,
        "fifteen": 15,
        "sixteen": 16,
        "seventeen": 17,
        "eighteen": 18,
        "nineteen": 19,
        "twenty": 20,
        "thirty": 30,
        "forty": 40,
        "fifty": 50,
        "sixty": 60,
        "seventy": 70,
        "eighty": 80,
        "ninety": 90,
        "hundred": 100,
        "thousand": 1000,
    },
    "nl": {
        "nul": 0,
        "één": 1,
        "eén": 1,
        "twee": 2,
        "drie": 3,
        "vier": 4,
        "vijf": 5,
        "zes": 6,
        "zeven": 7,
        "acht": 8,
        "negen": 9,
        "tien": 10,
        "elf": 11,
        "twaalf": 12,
        "dertien": 13,
        "veertien": 14,
        "vijftien": 15,
        "zestien": 16,
        "zeventien": 17,
        "achttien": 18,
        "negentien": 19,
        "twintig": 20,
        "dertig": 30,
        "veertig": 40,
        "vijftig": 50,
        "zestig": 60,
        "zeventig": 70,
        "tachtig": 80,
        "negentig": 90,
        "honderd": 100,
        "duizend": 1000,
    },
}
# Articles that are also the word for one (un, una, ein, eine, een) are never read as numbers.

# German "einundzwanzig", Dutch "eenentwintig"; Spanish "treinta y dos" is read word by word.
_DE_ONES = {
    "ein": 1,
    "zwei": 2,
    "drei": 3,
    "vier": 4,
    "fünf": 5,
    "sechs": 6,
    "sieben": 7,
    "acht": 8,
    "neun": 9,
}
_DE_TENS = {
    "zwanzig": 20,
    "dreißig": 30,
    "dreissig": 30,
    "vierzig": 40,
    "fünfzig": 50,
    "sechzig": 60,
    "siebzig": 70,
    "achtzig": 80,
    "neunzig": 90,
}
_NL_ONES = {
    "een": 1,
    "één": 1,
    "twee": 2,
    "drie": 3,
    "vier": 4,
    "vijf": 5,
    "zes": 6,
    "zeven": 7,
    "acht": 8,
    "negen": 9,
}
_NL_TENS = {
    "twintig": 20,
    "dertig": 30,
    "veertig": 40,
    "vijftig": 50,
    "zestig": 60,
    "zeventig": 70,
    "tachtig": 80,
    "negentig": 90,
}
_EN_TENS = {
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
}
_EN_ONES = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9}


def _compounds(lang: str) -> dict[str, int]:
    out: dict[str, int] = {}
    if lang == "de":
        for o, ov in _DE_ONES.items():
            for t, tv in _DE_TENS.items():
                out[f"{o}und{t}"] = ov + tv
    elif lang == "nl":
        for o, ov in _NL_ONES.items():
            for t, tv in _NL_TENS.items():
                sep = "ën" if o.endswith("e") else "en"
                out[f"{o}{sep}{t}"] = ov + tv
                out[f"{o}en{t}"] = ov + tv
    elif lang == "en":
        for t, tv in _EN_TENS.items():
            for o, ov in _EN_ONES.items():
                out[f"{t}-{o}"] = tv + ov
    return out


_ES_HUNDREDS = {
    "doscientos": 200,
    "trescientos": 300,
    "cuatrocientos": 400,
    "quinientos": 500,
    "seiscientos": 600,
    "setecientos": 700,
    "ochocientos": 800,
    "novecientos": 900,
}
MILLION = {
    "es": ("millón", "millon", "millones"),
    "de": ("million", "millionen"),
    "en": ("million", "millions"),
}
MILLION["nl"] = ("miljoen", "miljoenen")
HUNDRED = {"es": ("cien", "ciento"), "de": ("hundert",), "en": ("hundred",), "nl": ("honderd",)}
THOUSAND = {"es": ("mil",), "de": ("tausend",), "en": ("thousand",), "nl": ("duizend",)}
# between two words of one number: "six hundred and fifty", "treinta y dos", "dreihundert und"
JOINERS = {"es": ("y",), "de": ("und",), "en": ("and",), "nl": ("en",)}


def _one_word(
    below: dict[str, int], ones: dict[str, int], hundred: str, thousand: str, sep: str
) -> dict[str, int]:
    """German and Dutch write a number below ten thousand as one word: ``dreihundertfünfzig``,
    ``zweitausendfünfhundert``, ``tweehonderdvijftig``. ``below``: the words of 1-99."""
    out: dict[str, int] = {}
    hundreds = {hundred: 100}
    for o, v in ones.items():
        hundreds[o + hundred] = v * 100
    for h, hv in list(hundreds.items()):
        out[h] = hv
        for w, v in below.items():
            out[h + w] = hv + v
            if sep:
                out[h + sep + w] = hv + v
    thousands = {thousand: 1000, **{o + thousand: v * 1000 for o, v in ones.items()}}
    for t, tv in thousands.items():
        out[t] = tv
        for h, hv in hundreds.items():
            out[t + h] = tv + hv
        for w, v in below.items():
            out[t + w] = tv + v
            if sep:
                out[t + sep + w] = tv + v
    return out


def number_words(language: str | None) -> dict[str, int]:
    """Word -> value for ``language`` (es, de, en, nl; anything else: en): single words, the
    compounds written as one word, and the words of a million."""
    lang = _lang(language)
    if lang not in _UNITS_WORDS:
        lang = "en"
    words = {w: v for w, v in _UNITS_WORDS[lang].items() if v is not None}
    words.update(_compounds(lang))
    if lang == "es":
        words.update(_ES_HUNDREDS)
        words.update({w[:-2] + "as": v for w, v in _ES_HUNDREDS.items()})  # doscientas personas
    elif lang == "de":
        below = {
            w: v for w, v in words.items() if 0 < v < 100 and w not in ("zwo", "einhundert", "eintausend")
        }
        words.update(_one_word(below, {**_DE_ONES, "ein": 1}, "hundert", "tausend", "und"))
    elif lang == "nl":
        below = {w: v for w, v in words.items() if 0 < v < 100 and w not in ("eén",)}
        ones = {"een": 1, **{w: v for w, v in _NL_ONES.items() if w not in ("een", "één")}}
        words.update(_one_word(below, ones, "honderd", "duizend", ""))
    words.update(dict.fromkeys(MILLION[lang], 1_000_000))
    return words


# halves and simple fractions in words: {language: {word: value}}; "zweieinhalb" and
# "tweeënhalf" are made from the ones; "half"/"medio"/"halb" alone need a unit after them
# (``half an hour``, ``media hora``, ``eine halbe Stunde``), see numbers.find_numbers
HALVES = {
    "de": {"anderthalb": "1.5", "eineinhalb": "1.5", "einhalb": "0.5"},
    "nl": {"anderhalf": "1.5"},
    "en": {},
    "es": {},
}
for _o, _v in _DE_ONES.items():
    if _o != "ein":
        HALVES["de"][_o + "einhalb"] = f"{_v}.5"
for _o, _v in _NL_ONES.items():
    if _o not in ("een", "één"):
        HALVES["nl"][_o + ("ënhalf" if _o.endswith("e") else "enhalf")] = f"{_v}.5"
        HALVES["nl"][_o + "enhalf"] = f"{_v}.5"
HALF_WORDS = {
    "en": ("half",),
    "es": ("medio", "media"),
    "de": ("halb", "halbe", "halben", "halber", "halbes"),
}
HALF_WORDS["nl"] = ("half", "halve")
AND_HALF = {
    "en": r"and\s+a\s+half",
    "es": r"y\s+medi[oa]",
    "de": r"und\s+ein\s+halb",
    "nl": r"en\s+een\s+half",
}
FRACTIONS = {  # denominator words (singular and plural) -> denominator
    "en": {"quarter": 4, "quarters": 4, "third": 3, "thirds": 3},
    "es": {"cuarto": 4, "cuartos": 4, "tercio": 3, "tercios": 3},
    "de": {"viertel": 4, "drittel": 3},
    "nl": {"kwart": 4, "derde": 3},
}
NUMERATORS = {  # the words a fraction's numerator is written with (an article is one)
    "en": {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3},
    "es": {"un": 1, "una": 1, "dos": 2, "tres": 3},
    "de": {"ein": 1, "eine": 1, "zwei": 2, "drei": 3},
    "nl": {"een": 1, "één": 1, "twee": 2, "drie": 3},
}


def _lang(language: str | None) -> str:
    return (language or "en").lower().split("-")[0].split("_")[0]
