"""The admin HTTP API (``/api/v2/...`` under both namespaces): the Sanic app, its handlers, the
views and responses they answer with, and the OpenAPI description of them."""
