"""The adapter tests use the in-process CLI of tests/cli."""

from tests.cli.conftest import cli_in  # noqa: F401  (a fixture, used by name)
