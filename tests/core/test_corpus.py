import pytest

from ragtriage.core.corpus import load_corpus
from ragtriage.core.errors import CorpusError
from ragtriage.core.text import fingerprint, normalize_text


def test_streaming_load_keeps_metadata(tmp_path):
    p = tmp_path / "c.jsonl"
    p.write_text(
        '{"id": "rückgabe-1", "text": "Rückgabe in 14 Tagen.", "doc": "r.md", "start": 0, "end": 21, "lang": "de"}\n'
        '\n{"id": "b", "text": "x"}',
        encoding="utf-8",
    )
    c = load_corpus(p)
    assert list(c) == ["rückgabe-1", "b"]
    r = c["rückgabe-1"]
    assert (r.doc, r.start, r.end, r.meta) == ("r.md", 0, 21, {"lang": "de"})
    assert len(c.content_hash) == 12


@pytest.mark.parametrize(
    "content,message",
    [
        (
            '{"id": "a", "text": "x"}\n{"id": "a", "text": "y"}\n',
            "c.jsonl:2: id: duplicate id 'a' (first at line 1)",
        ),
        ('{"id": "a", "text": "x"}\n{bad json\n', "c.jsonl:2: not valid JSON"),
        ('{"text": "x"}\n', "c.jsonl:1: id: is required"),
        ('{"id": "a"}\n', "c.jsonl:1: text: chunk 'a': is required"),
        ('["a", "b"]\n', "c.jsonl:1: expected a JSON object, got list"),
        ('{"id": "a", "text": "x"}\n\x00\x00\x00\n', "c.jsonl:2: not a text file"),
    ],
)
def test_bad_lines_are_located(tmp_path, content, message):
    p = tmp_path / "c.jsonl"
    p.write_text(content, encoding="utf-8")
    with pytest.raises(CorpusError) as e:
        load_corpus(p)
    assert any(str(x).endswith(message) or message in str(x) for x in e.value.problems), e.value.problems


def test_missing_file(tmp_path):
    with pytest.raises(CorpusError, match="chunks file not found"):
        load_corpus(tmp_path / "nope.jsonl")


def test_fingerprint_ignores_case_whitespace_and_unicode_form():
    a = "La garantía dura\n2 años."
    b = "la  GARANTI\u0301A dura 2 años. "  # decomposed accent, other spacing and case
    assert normalize_text(a) == normalize_text(b)
    assert fingerprint(a) == fingerprint(b)
    assert fingerprint(a) != fingerprint("La garantía dura 3 años.")


def test_the_clusters_take_the_loaded_corpus_only_while_its_file_is_unchanged(tmp_path):
    """``gold_docs`` reuses the corpus a command already read, never a stale copy of it."""
    import os

    from ragtriage.core.clusters import gold_docs
    from ragtriage.core.corpus import load_corpus, loaded_corpus

    p = tmp_path / "c.jsonl"
    p.write_text(
        '{"id": "a-1", "text": "x", "doc": "manual"}\n{"id": "b-1", "text": "y"}\n', encoding="utf-8"
    )
    assert loaded_corpus(p) is None  # not read yet
    corpus = load_corpus(p)
    assert loaded_corpus(p) is corpus
    assert gold_docs(p, ["a-1", "b-1", "zz"]) == {"a-1": "manual"}
    # the file changes (same size, new time): the memory copy is not used, the file is read
    p.write_text(
        '{"id": "a-1", "text": "x", "doc": "guide!"}\n{"id": "b-1", "text": "y"}\n', encoding="utf-8"
    )
    st = p.stat()
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    assert loaded_corpus(p) is None
    assert gold_docs(p, ["a-1"]) == {"a-1": "guide!"}
    del corpus
    import gc

    gc.collect()
    load_corpus(p)  # not kept alive by the memo: the next command's corpus replaces it
    assert loaded_corpus(p) is None  # (that one was dropped at once: nothing holds it)
