"""analytics tasks."""
