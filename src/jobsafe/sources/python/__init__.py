"""Python front end: job code analysed with libcst, never imported or run."""
