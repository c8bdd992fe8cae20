"""Built-in pipeline stages, one module per stage."""
