"""The adjudicator: shot records in, decisions out (pure Python, no pixels)."""
