"""The `claude-code` engine: the user's own `claude` CLI in print mode, with its own login.

cli.py finds and probes the executable (the only module that starts it), envelope.py reads its
JSON result and maps each failure to a typed error, engine.py is the Engine behind the seam.
"""
