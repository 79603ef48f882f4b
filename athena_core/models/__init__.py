"""Pydantic models at the boundaries: API bodies, stored documents, and the scope they carry."""
