"""CLI wording a new user tripped over (QA pass)."""
from __future__ import annotations

from tests.cli.test_validate import HEAD, write


def test_validate_summary_uses_singular_for_one(cli, tmp_path):
    # "1 cases ..., 1 warnings" read as a typo in the one line every user sees
    p = write(tmp_path, HEAD + "  - id: x\n    question: hola\n    expected: [zz]\n")
    r = cli("validate", p)
    assert r.returncode == 1, r.stderr
    assert "t.yaml: 1 case (0 unanswerable), 0 errors, 1 warning\n" in r.stdout
    assert "'zz'" in r.stderr
