"""Metamorphic tests: the fixtures rewritten the way real projects spell the same code."""
