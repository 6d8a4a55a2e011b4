"""Graph -> Graph rewrites, one per file; pipeline.py orders them."""
