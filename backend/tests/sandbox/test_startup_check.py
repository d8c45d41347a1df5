"""The service's start-up check of the sandbox (sandbox.require_working_sandbox, called by
`sanitas serve` with the local executor and by `sanitas worker`)."""

from __future__ import annotations

import pytest

from sanitas.sandbox import SandboxError, require_working_sandbox


def test_a_working_sandbox_passes(sandbox_settings):
    require_working_sandbox(sandbox_settings)


def test_a_sandbox_that_cannot_start_stops_the_service_with_the_reason(sandbox_settings):
    broken = sandbox_settings.model_copy(update={"sandbox_user": "no-such-user-here"})
    with pytest.raises(SandboxError) as raised:
        require_working_sandbox(broken)
    assert "docs/deploying.md" in str(raised.value)


def test_no_sandbox_is_not_checked(sandbox_settings):
    require_working_sandbox(sandbox_settings.model_copy(update={"sandbox": "none"}))
