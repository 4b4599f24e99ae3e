"""The Textual app (``ragtriage edit``). Importing this package imports Textual."""

from __future__ import annotations


def make_app(testset_path, run_path=None, corpus_path=None, **options):
    """The app on one test set; shared by ``ragtriage edit`` and the tests."""
    from .app import make_app as _make_app

    return _make_app(testset_path, run_path, corpus_path, **options)


__all__ = ["make_app"]
