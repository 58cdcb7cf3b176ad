"""events stage."""
