"""Deep judgment: every extracted attribute backed by a verbatim quote of the response."""
