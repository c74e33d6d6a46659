"""Bulk LLM work through Anthropic's Message Batches API: submit once, collect later, half the price."""
