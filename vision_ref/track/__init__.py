"""track stage."""
