"""An ICAP server (RFC 3507) in front of the engine: a proxy such as Squid sends HTTP
responses (RESPMOD, downloads) and requests (REQMOD, uploads) through the sandbox; see
server.py for a transaction's steps and docs/icap.md for running it."""
