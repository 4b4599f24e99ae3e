"""One key, one meaning, on every screen: the table ``?`` help shows and docs/spec/tui.md
prints (a test keeps the two and the screens' bindings in step).

Lists (Cases, Triage, Stale review, the picker's results) act on a key alone. The case
editor is a form where letters are typed, so there the same action is ctrl + the same
letter; two cannot be (ctrl+p is the command palette, ctrl+x cuts text) and are named
in the table. Dialogs: enter answers or applies, ctrl+s applies a form whose enter makes
a new line, escape cancels. Every key has a binding id, so it can be rebound.
"""

from __future__ import annotations

import re

from rich.text import Text

#: a key named in a screen's HELP_INTRO: ``{l}``, ``{ctrl+s}``, ``{shift+tab}``
HELP_KEY = re.compile(r"\{([^{}\s]+)\}")

#: (keys, what they do, where) — in the order help shows them
KEY_TABLE: tuple[tuple[str, str, str], ...] = (
    ("? / f1", "help: every key of this screen", "everywhere"),
    ("ctrl+p", "command palette: every action by name", "everywhere"),
    ("escape", "back; in a dialog, cancel; on Cases, clear the filter", "everywhere"),
    ("q / ctrl+q", "quit (asks first when there are unsaved changes)", "lists / everywhere"),
    ("ctrl+s", "save the test set; in a dialog's form, apply it", "everywhere"),
    ("ctrl+z / ctrl+y", "undo / redo (each change is one step)", "everywhere"),
    ("ctrl+r", "run the test set on a system", "Cases, Triage"),
    ("ctrl+e", "export: a format, or a CI report", "Cases"),
    ("j k ↑ ↓", "move (in Grading: the next / previous answer)", "lists"),
    ("pgup / pgdn", "a page up / down: the list; in Stale review, the candidates", "lists"),
    ("home / G end", "first / last", "lists"),
    ("J / K", "scroll the detail pane", "Cases, Triage, Stale review"),
    ("/", "filter (Cases) or search (picker)", "Cases, picker"),
    ("e", "open the case editor", "Cases, Triage"),
    ("enter", "the list's main action: open the editor; accept the proposed candidate", "lists"),
    ("p", "chunk picker (ctrl+o in the editor)", "Cases, Triage, Stale review"),
    ("n", "new case (ctrl+n in the editor)", "Cases"),
    ("d", "duplicate the case (ctrl+d in the editor)", "Cases"),
    ("x / delete / f8", "delete the case, asking first (f8 in the editor)", "Cases"),
    ("u", "unanswerable, or answerable again", "Cases, Triage, Stale review"),
    ("f", "next flagged case", "Cases"),
    ("s / S", "sort by the next column / reverse", "Cases"),
    ("l", "stale labels: review them (Cases), check them again (Stale review)", "Cases, Stale review"),
    ("t", "Triage: the run's failures", "Cases"),
    (
        "a",
        "accept: a retrieved chunk as also correct (Triage), the proposal shown (Stale review)",
        "Triage, Stale review",
    ),
    ("r", "replace the expected chunk", "Triage"),
    ("m", "must-contain strings", "Triage"),
    ("o", "a review note: kept with the case, shown on later runs and on Cases", "Triage"),
    ("v", "mark reviewed", "Triage"),
    ("R", "re-run this case", "Triage"),
    ("c", "cancel the run", "Triage"),
    ("g", "the grading queue: grade answers blind (judge)", "Triage"),
    ("i", "show / hide the summary: every rate with its 95 % interval, the judge, slices", "Triage"),
    ("I", "the summary in full, on the whole screen (J / K scroll it)", "Triage"),
    ("tab / shift+tab", "next / previous group; elsewhere, next / previous pane", "Triage"),
    ("1-9", "accept candidate n (of a stale label, or of a quote that does not resolve)", "Stale review"),
    ("L", "keep the quote for later: nothing is written", "Stale review"),
    ("F", "every automatic fix at once, as stale --fix (one undo step)", "Stale review"),
    ("y / n / s", "answer the grading question: yes, no, skip (no reference)", "Grading"),
    ("backspace", "take the last grade back", "Grading"),
    ("N", "narrowest first: next, the answer whose grade narrows the interval most", "Grading"),
    ("space", "toggle the chunk in or out of expected", "picker"),
    ("A", "expect any / all", "picker"),
    ("D", "the chunk's document in or out of expected_docs", "picker"),
    ("left / right", "the previous / next sentence of the chunk preview", "picker"),
    ("Q", "the sentence shown in or out of the evidence quotes", "picker"),
)


def key_table_markdown() -> str:
    """The table as docs/spec/tui.md prints it."""
    lines = ["| keys | what they do | where |", "|---|---|---|"]
    for keys, what, where in KEY_TABLE:
        lines.append(f"| `{keys}` | {what} | {where} |")
    return "\n".join(lines) + "\n"


def intro_keys(intro: str) -> list[str]:
    """The keys a help intro names in braces, in order (a test checks each is bound)."""
    return HELP_KEY.findall(intro)


def help_intro(intro: str) -> Text:
    """A help intro as text: paragraphs re-flowed, the keys in braces shown bold."""
    out = Text()
    for para in intro.strip().split("\n\n"):
        line = " ".join(para.split())
        at = 0
        for m in HELP_KEY.finditer(line):
            out.append(line[at : m.start()])
            out.append(m.group(1), style="bold")
            at = m.end()
        out.append(line[at:] + "\n\n")
    return out
