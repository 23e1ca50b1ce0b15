"""Built-in models (work in progress)."""
