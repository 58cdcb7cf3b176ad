"""live stage."""
