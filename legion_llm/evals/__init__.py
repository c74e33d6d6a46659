"""Evaluation suites: datasets, pure scorers and runners used by `legion-llm eval`."""
