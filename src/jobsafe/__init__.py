"""jobsafe: static analysis of scheduled-job safety."""

__version__ = "0.1.0"
