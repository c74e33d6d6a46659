"""The use cases, one module per concern (app/__init__.py says what a use case is)."""
