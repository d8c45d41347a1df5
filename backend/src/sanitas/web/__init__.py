"""The web platform every route stands on: the answer envelope and errors, request checks and
size limits, admission control, rate limits, security headers, the OpenAPI document and its
docs page, /health and /metrics, and the FastAPI dependencies (deps.py). The domains
(files, users, policies...) hold the routes; nothing here is about one domain."""
