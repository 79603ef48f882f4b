"""promote tasks."""
