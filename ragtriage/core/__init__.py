"""The domain layer of ragtriage: files, metrics, diagnosis, staleness, systems.

Nothing under ``ragtriage.core`` imports Textual; a test enforces it.
"""
