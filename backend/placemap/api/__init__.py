"""HTTP API (docs/api.md): app factory, thin routers, response models, error JSON."""

from placemap.api.app import create_app

__all__ = ["create_app"]
