"""The per-event pipeline (coalesce → segment → summarize → embed) and its beat sweeps."""
