"""Live ingest: collector websocket sessions, batch validation, the viewer hub, finalising live recordings."""
