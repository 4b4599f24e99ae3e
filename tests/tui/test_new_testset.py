"""Starting from nothing but a chunks file: ``ragtriage edit NEW.yaml --corpus CHUNKS``
offers to create the test set, and the app opens on its empty Cases screen with ``n``
ready; the first case is written, picked and saved with the keyboard."""

from __future__ import annotations

import argparse
import io
import shutil
import sys

import pytest

from ragtriage.commands import edit_cmd
from ragtriage.commands.init_cmd import create
from ragtriage.core.document import TestSetDocument
from ragtriage.core.errors import InputError
from ragtriage.tui import make_app
from ragtriage.tui.screens.cases import NO_CASES, CasesScreen
from ragtriage.tui.screens.editor import EditorScreen
from ragtriage.tui.screens.picker import PickerScreen
from ragtriage.tui.widgets.case_detail import CaseDetail

from .conftest import ROOT, settle, text_of


@pytest.fixture
def chunks(tmp_path):
    shutil.copy(ROOT / "testsets" / "shop-es.chunks.jsonl", tmp_path / "tienda.chunks.jsonl")
    return tmp_path / "tienda.chunks.jsonl"


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


class _Opened:
    """What edit_cmd opens: the arguments it gave the app factory (the app itself is
    driven by Pilot below; here only the terminal dialogue before it is under test)."""

    def __init__(self):
        self.calls = []

    def __call__(self, path, run, corpus, **options):
        self.calls.append((path, run, corpus))
        opened = self

        class _App:
            load_error = None
            return_code = 0

            def run(self):
                opened.ran = True

        return _App()


def _args(testset, corpus=None):
    return argparse.Namespace(testset=str(testset), run=None, corpus=str(corpus) if corpus else None)


@pytest.fixture
def terminal(monkeypatch):
    opened = _Opened()
    monkeypatch.setattr("ragtriage.tui.make_app", opened)
    return monkeypatch, opened


def _on_a_terminal(monkeypatch) -> _Tty:
    """stdin and stdout a terminal, set in the test itself (pytest resets its own capture
    between a fixture and the test)."""
    out = _Tty()
    monkeypatch.setattr(sys, "stdin", _Tty())
    monkeypatch.setattr(sys, "stdout", out)
    return out


def test_edit_a_missing_file_offers_to_create_it(terminal, chunks):
    monkeypatch, opened = terminal
    out = _on_a_terminal(monkeypatch)
    asked = []
    monkeypatch.setattr("builtins.input", lambda prompt: asked.append(prompt) or "")  # enter: yes
    new = chunks.parent / "nuevo.yaml"
    assert edit_cmd.main(_args(new, chunks)) == 0
    assert asked == [f"{new} does not exist. Create a new test set over {chunks}? [Y/n] "]
    assert opened.calls == [(new, None, None)] and opened.ran  # the set names its corpus itself
    doc = TestSetDocument.load(new, use_cache=False)
    assert doc.cases == () or list(doc.cases) == []
    assert doc.settings.language == "es" and doc.corpus_path.resolve() == chunks.resolve()
    assert "language: es, guessed from the chunks' text" in out.getvalue()


def test_declining_creates_nothing(terminal, chunks):
    monkeypatch, opened = terminal
    _on_a_terminal(monkeypatch)
    monkeypatch.setattr("builtins.input", lambda prompt: "n")
    new = chunks.parent / "nuevo.yaml"
    assert edit_cmd.main(_args(new, chunks)) == 0
    assert not new.exists() and opened.calls == []


def test_without_corpus_or_terminal_the_error_says_how_to_begin(chunks, monkeypatch):
    new = chunks.parent / "nuevo.yaml"
    with pytest.raises(InputError) as e:
        edit_cmd.main(_args(new))
    msg = str(e.value)
    assert "test set not found" in msg and "ragtriage edit" in msg and "--corpus CHUNKS" in msg
    with pytest.raises(InputError) as e:  # not a terminal: nothing to ask, so nothing made
        edit_cmd.main(_args(new, chunks))
    assert "ragtriage init" in str(e.value) and not new.exists()


async def test_the_new_set_opens_empty_with_n_ready(chunks):
    new = chunks.parent / "nuevo.yaml"
    create(new, chunks)
    app = make_app(new)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        assert isinstance(app.screen, CasesScreen)
        detail = app.screen.query_one(CaseDetail)
        assert " ".join(text_of(detail.query_one("#detail-text")).split()) == " ".join(NO_CASES.split())
        await pilot.press("n")
        await settle(app, pilot)
        editor = app.screen
        assert isinstance(editor, EditorScreen) and editor.case_id is None
        await pilot.press(
            *"precio-oficina", "tab", *"envíos", "tab", *"¿Cuánto cuesta mandarlo a una oficina?"
        )
        await pilot.press("ctrl+o")
        await settle(app, pilot)
        assert isinstance(app.screen, PickerScreen) and app.screen.results[0][0] == "entrega-1"
        await pilot.press("space", "escape")
        await settle(app, pilot)
        await pilot.press("ctrl+s")
        await settle(app, pilot)
    doc = TestSetDocument.load(new, use_cache=False)
    assert [c.id for c in doc.cases] == ["precio-oficina"]
    assert doc.case("precio-oficina").expected == ("entrega-1",)
    assert doc.labels["entrega-1"].text.startswith("Enviamos a toda la península")  # recorded on save
    text = new.read_text(encoding="utf-8")
    assert text.startswith("# A ragtriage test set: the questions your users ask")  # the header kept
