"""The judge's prompt, in the test set's language (es, de, nl, en; others use en).

A judge asked in English about a Spanish answer scores correct answers low
(ragas #402, deepeval #2578), so the instructions are written in the language
of the cases. The JSON keys stay English: they are read by code, not people.
``PROMPT_VERSION`` is part of every cache key: change it whenever a template
changes, so no verdict given to an older prompt is reused.
"""

from __future__ import annotations

from collections.abc import Sequence

PROMPT_VERSION = "1"

_EN = {
    "system": (
        "You check answers of a question-answering system. You are given the sources the system saw, "
        "the question, the system's answer{ref_intro}. Reply with one JSON object and nothing else: "
        '{{"supported": true or false, "correct": {correct_values}, "reason": "one short sentence"}}. '
        '"supported": does every claim of the answer follow from the text of the sources? '
        '"correct": {correct_rule} Write the reason in English.'
    ),
    "ref_intro": " and a reference answer",
    "correct_rule_ref": "does the answer say what the reference says (in meaning, not in wording)?",
    "correct_rule_none": "there is no reference here, so always null.",
    "sources": "Sources",
    "no_sources": "(no sources)",
    "question": "Question",
    "answer": "Answer",
    "reference": "Reference",
    "must_contain": "The answer must say (in meaning)",
}

_ES = {
    "system": (
        "Revisas las respuestas de un sistema de preguntas y respuestas. Recibes las fuentes que vio el "
        "sistema, la pregunta, la respuesta del sistema{ref_intro}. Responde con un único objeto JSON y "
        'nada más: {{"supported": true o false, "correct": {correct_values}, "reason": "una frase corta"}}. '
        '"supported": ¿se deduce cada afirmación de la respuesta del texto de las fuentes? '
        '"correct": {correct_rule} Escribe el motivo en español.'
    ),
    "ref_intro": " y una respuesta de referencia",
    "correct_rule_ref": "¿dice la respuesta lo mismo que la referencia (en el sentido, no en las palabras)?",
    "correct_rule_none": "aquí no hay referencia, así que siempre null.",
    "sources": "Fuentes",
    "no_sources": "(sin fuentes)",
    "question": "Pregunta",
    "answer": "Respuesta",
    "reference": "Referencia",
    "must_contain": "La respuesta debe decir (en el sentido)",
}

_DE = {
    "system": (
        "Du prüfst Antworten eines Frage-Antwort-Systems. Du bekommst die Quellen, die das System gesehen "
        "hat, die Frage, die Antwort des Systems{ref_intro}. Antworte mit genau einem JSON-Objekt und sonst "
        'nichts: {{"supported": true oder false, "correct": {correct_values}, "reason": "ein kurzer Satz"}}. '
        '"supported": folgt jede Aussage der Antwort aus dem Text der Quellen? '
        '"correct": {correct_rule} Schreibe die Begründung auf Deutsch.'
    ),
    "ref_intro": " und eine Referenzantwort",
    "correct_rule_ref": "sagt die Antwort dasselbe wie die Referenz (im Sinn, nicht im Wortlaut)?",
    "correct_rule_none": "hier gibt es keine Referenz, also immer null.",
    "sources": "Quellen",
    "no_sources": "(keine Quellen)",
    "question": "Frage",
    "answer": "Antwort",
    "reference": "Referenz",
    "must_contain": "Die Antwort muss (im Sinn) sagen",
}

_NL = {
    "system": (
        "Je controleert antwoorden van een vraag-antwoordsysteem. Je krijgt de bronnen die het systeem zag, "
        "de vraag, het antwoord van het systeem{ref_intro}. Antwoord met precies één JSON-object en verder "
        'niets: {{"supported": true of false, "correct": {correct_values}, "reason": "één korte zin"}}. '
        '"supported": volgt elke bewering van het antwoord uit de tekst van de bronnen? '
        '"correct": {correct_rule} Schrijf de reden in het Nederlands.'
    ),
    "ref_intro": " en een referentieantwoord",
    "correct_rule_ref": "zegt het antwoord hetzelfde als de referentie (in betekenis, niet in woorden)?",
    "correct_rule_none": "hier is geen referentie, dus altijd null.",
    "sources": "Bronnen",
    "no_sources": "(geen bronnen)",
    "question": "Vraag",
    "answer": "Antwoord",
    "reference": "Referentie",
    "must_contain": "Het antwoord moet (in betekenis) zeggen",
}

TEMPLATES: dict[str, dict[str, str]] = {"en": _EN, "es": _ES, "de": _DE, "nl": _NL}


def prompt_language(language: str | None) -> str:
    """The template used for ``language`` (``es-MX`` -> ``es``; unknown -> ``en``)."""
    lang = (language or "en").lower().replace("_", "-").split("-")[0]
    return lang if lang in TEMPLATES else "en"


def reference_text(answer: str | None, must_contain: Sequence[str]) -> tuple[str, str] | None:
    """(label key, text) of the case's reference: its ``answer``, else its ``must_contain``."""
    if answer:
        return "reference", answer
    if must_contain:
        return "must_contain", "\n".join(f"- {s}" for s in must_contain)
    return None


def build_messages(
    language: str | None,
    question: str,
    answer: str,
    sources: Sequence[tuple[str, str]],
    reference: tuple[str, str] | None,
) -> list[dict[str, str]]:
    """The chat messages for one case: a system instruction and one user message."""
    t = TEMPLATES[prompt_language(language)]
    has_ref = reference is not None
    system = t["system"].format(
        ref_intro=t["ref_intro"] if has_ref else "",
        correct_values="true or false" if has_ref else "null",
        correct_rule=t["correct_rule_ref"] if has_ref else t["correct_rule_none"],
    )
    src = "\n\n".join(f"[{cid}] {text}" for cid, text in sources) or t["no_sources"]
    parts = [f"{t['sources']}:\n\n{src}", f"{t['question']}: {question}", f"{t['answer']}: {answer}"]
    if reference is not None:
        key, text = reference
        parts.append(f"{t[key]}:\n{text}" if key == "must_contain" else f"{t[key]}: {text}")
    return [{"role": "system", "content": system}, {"role": "user", "content": "\n\n".join(parts)}]
