"""Athena core: the service's code shared by the API (`athena_api`) and the workers (`athena_tasks`).

Folders by role (docs/architecture.md, checked by `lint-imports`): `wiring/` (settings, the composition
root, Redis), `observability/`, `usecases/`, the tiers `stm/`, `mtm/`, `ltm/`, `retrieval/`, `text/`,
`providers/` and `stores/` (ports beside their adapters), and `models/` at the bottom.
"""
