"""The Athena HTTP SDK (sync and async): `from athena_client import AthenaClient`."""
from athena_client.client import AsyncAthenaClient, AthenaClient

__all__ = ["AsyncAthenaClient", "AthenaClient"]
