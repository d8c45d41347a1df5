"""The backend's test suites. A package, so that helpers are imported by their place
(`from tests.engine.corpus import ...`): pytest puts backend/ on sys.path for it."""
