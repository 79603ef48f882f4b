"""Athena's thin ASGI API (FastAPI): validates, authorises, and hands work to `athena_core`."""
