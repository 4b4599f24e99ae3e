import pytest
from pydantic import ValidationError

from ragtriage.core.schema import Case, Settings, parse_metric


def test_case_defaults_and_unicode_id():
    c = Case(id="garantía-1", question="¿cuánto dura la garantía?", expected=["garantía-1"])
    assert c.expect == "any" and c.expected == ("garantía-1",) and not c.unanswerable
    assert not c.unlabelled


def test_unanswerable_with_expected_is_an_error():
    with pytest.raises(ValidationError, match="unanswerable"):
        Case(id="x", question="q", unanswerable=True, expected=["a"])


def test_unlabelled_is_allowed_in_the_model():
    assert Case(id="x", question="q").unlabelled


@pytest.mark.parametrize("bad", ["", "two words", "tab\there"])
def test_id_rejects_whitespace_and_empty(bad):
    with pytest.raises(ValidationError):
        Case(id=bad, question="q")


def test_parse_metric():
    assert parse_metric("hit@3") == ("hit", 3)
    assert parse_metric("accuracy") == ("accuracy", None)
    with pytest.raises(ValueError, match="did you mean 'accuracy'"):
        parse_metric("acuracy")
    with pytest.raises(ValueError, match="take @k"):
        parse_metric("accuracy@3")


def test_settings_gates_checked():
    with pytest.raises(ValidationError):
        Settings(gates={"hit@3": 1.5})
    assert Settings(gates={"hit@3": 0.85}).gates == {"hit@3": 0.85}
