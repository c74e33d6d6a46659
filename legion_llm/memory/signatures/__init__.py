"""Error signatures and topic matching: salient lines, normalisation, fingerprints, weighted fuzzy scores."""
