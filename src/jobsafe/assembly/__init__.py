"""Assembling the Project: each mixin turns one family of front-end results into jobs and
facts, with the link step. ``analysis.Builder`` combines them."""
