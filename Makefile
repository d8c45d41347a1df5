# The two commands that matter: `make run` and `make test`.
SHELL := /bin/bash
VENV := backend/.venv
SANITAS := $(VENV)/bin/sanitas

.PHONY: run test install install-test build-frontend test-backend test-frontend test-e2e bench fuzz lint api-types container-test compose-test kube-test

run: install build-frontend
	$(SANITAS) serve

test: install-test build-frontend
	@scripts/ensure-services.sh
	@scripts/run-tests.sh

install:
	@scripts/install.sh

install-test:
	@scripts/install.sh --with-test-tools

build-frontend:
	@scripts/build-frontend.sh

test-backend: install-test
	@scripts/ensure-services.sh
	cd backend && .venv/bin/pytest -q

test-frontend: install-test
	cd frontend && npx vitest run

test-e2e: install-test build-frontend
	cd frontend && node tests/run-e2e.mjs

bench: install build-frontend
	@scripts/run-bench.sh

# Long: schemathesis over the API and the fuzz targets at high example counts (not in `make test`).
fuzz: install-test
	@scripts/fuzz.sh

lint: install
	cd backend && .venv/bin/ruff check src tests
	cd backend && .venv/bin/mypy
	cd frontend && npx tsc --noEmit -p tsconfig.json && npm run --silent lint

# Long: builds the image and runs PostgreSQL, Redis, S3, the API and two workers as containers
# (podman), then a smoke test through the API (not in `make test`; docs/deploying.md).
container-test:
	@scripts/container-test.sh

# Long too: deploy/compose.yaml with podman-compose, deploy/kubernetes/ with podman kube play
# (the same images, smoke test and ICAP check; docs/deploying.md says what each exercises).
compose-test:
	@scripts/container-test.sh --compose

kube-test:
	@scripts/container-test.sh --kube

api-types: install-test
	@scripts/api-types.sh
