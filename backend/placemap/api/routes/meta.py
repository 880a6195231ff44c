"""Health and topologies."""

from __future__ import annotations

from importlib.metadata import version
from typing import Any

from fastapi import APIRouter, Body

from placemap.api.deps import StoreDep
from placemap.api.errors import ApiError, not_found
from placemap.api.models import Created, Health
from placemap.importer.machine import llc_index_problem
from placemap.schema.models.topology_schema import Topology

router = APIRouter(prefix="/api")


@router.get("/health")
def health() -> Health:
    return Health(ok=True, version=version("placemap"))


@router.post("/topologies", status_code=201)
def create_topology(store: StoreDep, topology: Topology = Body(...)) -> Created:  # noqa: B008
    problem = llc_index_problem(topology)
    if problem is not None:
        raise ApiError(422, "bad_topology", problem)
    return Created(id=store.put_topology(topology.model_dump(mode="json", exclude_none=True)))


@router.get("/topologies/{topology_id}")
def get_topology(store: StoreDep, topology_id: str) -> Topology:
    body: dict[str, Any] | None = store.get_topology(topology_id)
    if body is None:
        raise not_found("topology", topology_id)
    return Topology.model_validate(body)
