"""Authentication and scope authorisation (SPEC S10), independent of the web framework.

Two credentials: an API key (`X-API-Key`) authenticates a service acting for one tenant; a JWT
(HS256 or RS256, `exp` required) carries tenant_id, user_id and optionally agent_id, which override
anything in request bodies. A session can only be used by the tenant and user that own it.
"""
from __future__ import annotations

import hmac
from dataclasses import dataclass
from typing import Union

import jwt
from pydantic import BaseModel, ConfigDict, StrictFloat, StrictInt, StrictStr, ValidationError, field_validator

from athena_core.models.scope import SCOPE_ID_RULE, is_scope_id
from athena_core.wiring.settings import Settings


class AuthError(Exception):
    """401: no or invalid credential."""


class ForbiddenError(Exception):
    """403: a valid credential that may not do this."""


@dataclass(frozen=True)
class Principal:
    """Who is calling. `None` fields are unconstrained (auth off, or a tenant-wide service key)."""

    tenant_id: str | None
    user_id: str | None = None
    agent_id: str | None = None
    is_admin: bool = False
    via: str = "none"  # none | api_key | jwt

    def may_use(self, tenant_id: str, user_id: str) -> bool:
        """The wall of SPEC S1/S10: owner tenant, and owner user when the credential names one."""
        if self.tenant_id is not None and self.tenant_id != tenant_id:
            return False
        return self.user_id is None or self.user_id == user_id


ANONYMOUS = Principal(tenant_id=None, is_admin=True, via="none")


@dataclass(frozen=True)
class ApiKey:
    key: str
    tenant_id: str
    is_admin: bool


def parse_api_keys(spec: str) -> list[ApiKey]:
    """`key:tenant[:admin],key2:tenant2` → ApiKey entries; malformed entries are a start-up error."""
    keys = []
    for entry in filter(None, (part.strip() for part in spec.split(","))):
        parts = entry.split(":")
        if len(parts) not in (2, 3) or not parts[0] or not parts[1] or (len(parts) == 3 and parts[2] != "admin"):
            raise ValueError(f"ATHENA_API_KEYS entry must be key:tenant[:admin], got {entry!r}")
        if not is_scope_id(parts[1]):
            raise ValueError(f"ATHENA_API_KEYS tenant {parts[1]!r}: a tenant id {SCOPE_ID_RULE}")
        keys.append(ApiKey(key=parts[0], tenant_id=parts[1], is_admin=len(parts) == 3))
    return keys


Roles = Union[StrictStr, list[StrictStr], None]


class JwtClaims(BaseModel):
    """The claims Athena reads, typed (issue 12): ids follow the scope id rules of S1, `exp` is a number,
    `roles`/`role` a string or a list of strings. Other claims are allowed and ignored."""

    model_config = ConfigDict(extra="allow", strict=True)

    tenant_id: StrictStr
    user_id: StrictStr | None = None
    agent_id: StrictStr | None = None
    exp: StrictInt | StrictFloat
    iat: StrictInt | StrictFloat | None = None
    nbf: StrictInt | StrictFloat | None = None
    roles: Roles = None
    role: Roles = None

    @field_validator("tenant_id", "user_id", "agent_id")
    @classmethod
    def _scope_id(cls, value: str | None) -> str | None:
        if value is not None and not is_scope_id(value):
            raise ValueError(SCOPE_ID_RULE)
        return value

    @property
    def role_names(self) -> list[str]:
        roles = self.roles or self.role or []
        return [roles] if isinstance(roles, str) else list(roles)


def _claims_error(exc: ValidationError) -> str:
    problems = []
    for error in exc.errors():
        name = str(error["loc"][0]) if error["loc"] else "claims"
        if error["type"] == "missing":
            problems.append(f"JWT has no {name} claim")
        elif name in ("roles", "role"):
            problems.append(f"{name} claim must be a string or list of strings")
        elif name in ("exp", "iat", "nbf"):
            problems.append(f"{name} claim must be a number")
        else:
            problems.append(f"{name} claim {error['msg'].removeprefix('Value error, ')}")
    return "; ".join(dict.fromkeys(problems))


class Authenticator:
    def __init__(self, settings: Settings) -> None:
        self.mode = settings.auth_mode
        self.api_keys = parse_api_keys(settings.api_keys)
        self.jwt_secret = settings.jwt_secret
        self.jwt_public_key = settings.jwt_public_key
        self.algorithms = [a.strip() for a in settings.jwt_algorithms.split(",") if a.strip()]
        self.admin_role = settings.jwt_admin_role
        if self.mode == "api_key" and not self.api_keys:
            raise ValueError("ATHENA_AUTH_MODE=api_key needs ATHENA_API_KEYS")
        if self.mode in ("jwt", "api_key_or_jwt") and not (self.jwt_secret or self.jwt_public_key):
            raise ValueError("JWT auth needs ATHENA_JWT_SECRET (HS256) or ATHENA_JWT_PUBLIC_KEY (RS256)")

    def authenticate(self, api_key: str | None, authorization: str | None) -> Principal:
        if self.mode == "off":
            return ANONYMOUS
        if authorization and self.mode in ("jwt", "api_key_or_jwt"):
            scheme, _, token = authorization.partition(" ")
            if scheme.lower() != "bearer" or not token:
                raise AuthError("Authorization header must be 'Bearer <jwt>'")
            return self._from_jwt(token.strip())
        if api_key and self.mode in ("api_key", "api_key_or_jwt"):
            return self._from_api_key(api_key)
        raise AuthError("missing credential: send X-API-Key or Authorization: Bearer <jwt>")

    def _from_api_key(self, presented: str) -> Principal:
        for candidate in self.api_keys:
            if hmac.compare_digest(candidate.key.encode(), presented.encode()):
                return Principal(tenant_id=candidate.tenant_id, is_admin=candidate.is_admin, via="api_key")
        raise AuthError("unknown API key")

    def _verification_key(self, algorithm: str) -> str:
        if algorithm == "HS256" and self.jwt_secret:
            return self.jwt_secret
        if algorithm == "RS256" and self.jwt_public_key:
            return self.jwt_public_key
        raise AuthError(f"JWT algorithm {algorithm!r} is not accepted")

    def _from_jwt(self, token: str) -> Principal:
        try:
            algorithm = jwt.get_unverified_header(token).get("alg", "")
            if algorithm not in self.algorithms:
                raise AuthError(f"JWT algorithm {algorithm!r} is not accepted")
            claims = jwt.decode(
                token,
                self._verification_key(algorithm),
                algorithms=[algorithm],
                options={"require": ["exp"]},
            )
        except jwt.ExpiredSignatureError as exc:
            raise AuthError("JWT expired") from exc
        except jwt.InvalidTokenError as exc:
            raise AuthError(f"invalid JWT: {exc}") from exc
        if not isinstance(claims, dict):
            raise AuthError("invalid JWT: the payload is not a JSON object")
        try:
            typed = JwtClaims.model_validate(claims)
        except ValidationError as exc:
            raise AuthError(f"invalid JWT claims: {_claims_error(exc)}") from exc
        return Principal(
            tenant_id=typed.tenant_id,
            user_id=typed.user_id,
            agent_id=typed.agent_id,
            is_admin=self.admin_role in typed.role_names,
            via="jwt",
        )
