"""Thin HTTP routers: parse, call the store / replay, shape the response."""
