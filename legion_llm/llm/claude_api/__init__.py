"""The Anthropic Messages API adapter: the only code that imports anthropic and tenacity."""
