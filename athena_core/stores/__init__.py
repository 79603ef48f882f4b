"""Store ports (one small interface per role) and their adapters (one module per engine)."""
