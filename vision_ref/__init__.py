"""vision-ref: an automatic referee for Russian carom with five pins."""

__version__ = "0.1.0"
