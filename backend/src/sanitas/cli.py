"""The `sanitas` command line."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, TypedDict

import click

from sanitas.config import Settings, get_settings
from sanitas.engine.policy import Mode

if TYPE_CHECKING:
    from sanitas.web.http_limits import EdgeProtocol


@click.group()
def main() -> None:
    """Sanitas: self-hostable file sanitization."""
    from sanitas import logs

    logs.configure(logs.log_format(os.environ.get("SANITAS_ENV", "development"),
                                   os.environ.get("SANITAS_LOG_FORMAT")))


def _service_settings():
    """Settings for a command that creates the service's data: from here on every file it
    creates is private (umask 077), and the data directory exists, 0700 (see datadir.py)."""
    from sanitas.datadir import prepare_data_dir, private_files

    private_files()
    settings = get_settings()
    prepare_data_dir(settings)
    return settings


@main.command("openapi")
def openapi_schema() -> None:
    """Print the API's OpenAPI document (JSON); the web app's types are generated from it."""
    import json
    import tempfile

    from sanitas.config import Settings
    from sanitas.main import create_app

    with tempfile.TemporaryDirectory() as scratch:  # the schema depends on no setting
        app = create_app(Settings(data_dir=scratch, env="development"), start_background=False)
        click.echo(json.dumps(app.openapi(), indent=2, sort_keys=True))


@main.command()
def migrate() -> None:
    """Apply database migrations."""
    from sanitas.migrate import upgrade_to_head

    settings = _service_settings()
    upgrade_to_head(str(settings.database_url))
    click.echo("Database is up to date.")


class _ServeOptions(TypedDict):
    """What `serve` passes to uvicorn.run, whether it runs one API process or several."""

    host: str
    port: int
    log_level: str
    proxy_headers: bool
    http: type[EdgeProtocol]
    h11_max_incomplete_event_size: int
    log_config: None  # uvicorn keeps the logging `main` set up (logs.py)


@main.command()
@click.option("--host", default=None, help="Interface to bind (default SANITAS_HOST).")
@click.option("--port", default=None, type=int, help="Port (default SANITAS_PORT).")
@click.option("--no-migrate", is_flag=True, help="Do not apply migrations on start.")
@click.option("--workers", type=int, default=None,
              help="API processes (default SANITAS_API_WORKERS, 1). With more than one, the "
                   "local executor runs once, in this supervising process.")
def serve(host: str | None, port: int | None, no_migrate: bool, workers: int | None) -> None:
    """Run the API, the executor and the web UI."""
    import uvicorn

    # --host and --port stand for SANITAS_HOST and SANITAS_PORT: the default public URL (the
    # links in e-mails) follows them, here and in the API processes of --workers.
    if host:
        os.environ["SANITAS_HOST"] = host
    if port:
        os.environ["SANITAS_PORT"] = str(port)
    settings = _service_settings()
    workers = max(1, workers or settings.api_workers)
    if workers > 1:  # one metrics view over the API processes and this one (metrics.py)
        _shared_metrics_dir(settings)

    from sanitas.main import create_app
    from sanitas.migrate import upgrade_to_head
    from sanitas.web.http_limits import MAX_HEADER_BYTES, EdgeProtocol, raise_open_file_limit

    if settings.executor == "local":  # jobs run in this process's sandboxes
        _require_sandbox(settings)
    if not no_migrate:
        upgrade_to_head(str(settings.database_url))
    # Each connection is a file: the soft limit (often 1,024) goes up to the hard one.
    raise_open_file_limit()
    # h11, not httptools: h11 refuses a request head (line + headers) past the cap before
    # parsing it, where httptools buffers headers of any size; EdgeProtocol adds the head
    # deadline, the per-address connection cap and the cap on complete heads (http_limits.py).
    options = _ServeOptions(host=settings.host, port=settings.port,
                            log_level=os.environ.get("SANITAS_LOG_LEVEL", "info").lower(),
                            proxy_headers=False, http=EdgeProtocol,
                            h11_max_incomplete_event_size=MAX_HEADER_BYTES, log_config=None)
    if workers == 1:
        uvicorn.run(create_app(settings), **options)
        return
    from sanitas.processing import run_supervisor_executor

    stop = run_supervisor_executor(settings) if settings.executor == "local" else None
    try:
        uvicorn.run("sanitas.main:api_worker_app", factory=True, workers=workers, **options)
    finally:
        if stop is not None:
            stop()


@main.command()
@click.option("--concurrency", type=int, default=None,
              help="Jobs run at once by this worker (default SANITAS_EXECUTOR_WORKERS).")
@click.option("--beat/--no-beat", default=True, show_default=True,
              help="Also run the scheduler for the periodic expiry and recovery tasks.")
@click.option("--queues", default=None,
              help="Queues to consume (default: sanitas-high,sanitas-normal).")
def worker(concurrency: int | None, beat: bool, queues: str | None) -> None:
    """Run a Celery worker for SANITAS_EXECUTOR=celery (needs SANITAS_BROKER_URL and the
    shared database and storage)."""
    settings = _service_settings()
    if settings.metrics_port:  # the jobs run in Celery's child processes: one shared view
        _shared_metrics_dir(settings)

    from sanitas.processing.celery_app import HIGH_QUEUE, NORMAL_QUEUE, worker_app

    _require_sandbox(settings)
    if settings.metrics_port:
        from sanitas.web.metrics import serve_worker_metrics

        serve_worker_metrics(settings)
    app = worker_app()
    argv = ["worker", f"--concurrency={concurrency or settings.executor_workers}",
            f"--queues={queues or f'{HIGH_QUEUE},{NORMAL_QUEUE}'}",
            f"--loglevel={os.environ.get('SANITAS_LOG_LEVEL', 'INFO')}",
            f"--hostname=sanitas-{os.getpid()}@%h", "--without-gossip", "--without-mingle"]
    if beat:
        argv += ["--beat", f"--schedule={settings.data_dir / 'celerybeat-schedule'}"]
    app.worker_main(argv)


@main.command()
@click.option("--host", default=None, help="Interface to bind (default SANITAS_ICAP_HOST, "
                                           "127.0.0.1).")
@click.option("--port", default=None, type=int, help="Port (default SANITAS_ICAP_PORT, 1344).")
@click.option("--no-migrate", is_flag=True, help="Do not apply migrations on start.")
def icap(host: str | None, port: int | None, no_migrate: bool) -> None:
    """Run the ICAP server (services /sanitize and /sanitize-advanced) for a proxy such as
    Squid; see docs/icap.md."""
    from sanitas.icap.server import run
    from sanitas.icap.tls import TlsSetupError, server_context

    settings = _service_settings()
    try:
        context = server_context(settings)  # a bad certificate stops it here, not later
    except TlsSetupError as exc:
        raise click.ClickException(str(exc)) from exc
    _require_sandbox(settings)
    run(settings, host or settings.icap_host, port or settings.icap_port,
        migrate=not no_migrate, context=context)


@main.command()
@click.option("--listen", default=None, help="host:port to listen on (default SANITAS_MAIL_LISTEN, "
                                            "127.0.0.1:10025).")
@click.option("--next-hop", default=None, help="host:port cleaned messages are re-injected to "
                                              "(default SANITAS_MAIL_NEXT_HOP, 127.0.0.1:10026).")
@click.option("--policy", "policy_id", default=None,
              help="'basic', 'advanced' or an organisation-wide policy's id (default "
                   "SANITAS_MAIL_POLICY, basic).")
@click.option("--no-migrate", is_flag=True, help="Do not apply migrations on start.")
def mail(listen: str | None, next_hop: str | None, policy_id: str | None,
         no_migrate: bool) -> None:
    """Run the mail filter: an SMTP after-queue content filter for Postfix that cleans every
    message's attachments and re-injects it; see docs/mail.md."""
    from sanitas.mailfilter import relay, service
    from sanitas.mailfilter.server import run

    settings = _service_settings()
    try:
        relay.parse_hop(listen or settings.mail_listen)
        relay.parse_hop(next_hop or settings.mail_next_hop)
    except ValueError as exc:
        raise click.ClickException(str(exc)) from exc
    _require_sandbox(settings)
    try:
        run(settings, listen or settings.mail_listen, next_hop or settings.mail_next_hop,
            policy_id or settings.mail_policy, migrate=not no_migrate)
    except service.UnknownPolicy as exc:
        raise click.ClickException(str(exc)) from exc


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Print the checks as one JSON object.")
def doctor(as_json: bool) -> None:
    """Check what this deployment needs (sandbox, LibreOffice, fonts, database, storage,
    broker, secret key, public URL, SMTP); exit 1 if anything fails."""
    import json

    from sanitas import doctor as checks

    results = checks.run(get_settings())
    if as_json:
        click.echo(json.dumps(checks.as_json(results), indent=1))
    else:
        marks = {"ok": "ok  ", "warn": "WARN", "fail": "FAIL"}
        for check in results:
            click.echo(f"{marks[check.status]}  {check.name:<11} {check.detail}")
            if check.fix and check.status != "ok":
                click.echo(f"      {'':<11} fix: {check.fix}")
    if any(check.status == "fail" for check in results):
        raise SystemExit(1)


def _shared_metrics_dir(settings: Settings) -> None:
    """A fresh folder for prometheus-client's multiprocess files, set before it is imported."""
    import shutil

    folder = settings.data_dir / "metrics"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(mode=0o700)
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(folder)


def _require_sandbox(settings: Settings) -> None:
    """Stop at start, with the reason, where jobs could not be isolated."""
    from sanitas.sandbox import SandboxError, require_working_sandbox

    try:
        require_working_sandbox(settings)
    except SandboxError as exc:
        raise click.ClickException(str(exc)) from exc


@main.command("create-admin")
@click.argument("email")
@click.option("--password", envvar="SANITAS_ADMIN_PASSWORD", default=None,
              help="Password (else SANITAS_ADMIN_PASSWORD, else prompted).")
def create_admin(email: str, password: str | None) -> None:
    """Create an ADMIN account, or promote an existing account to ADMIN, in the installation
    `serve` uses from this folder (SANITAS_DATA_DIR, default ./data); refuses where there is
    none, creating nothing."""
    from sanitas.migrate import missing_installation

    missing = missing_installation(get_settings())
    if missing:
        click.echo(f"Error: {missing}", err=True)
        sys.exit(2)

    from sqlalchemy import func, select

    from sanitas.auth.passwords import hash_password
    from sanitas.auth.service import normalise_email
    from sanitas.db import make_engine, make_sessionmaker
    from sanitas.migrate import upgrade_to_head
    from sanitas.models import User

    settings = _service_settings()
    upgrade_to_head(str(settings.database_url))
    if password is None:
        password = click.prompt("Password", hide_input=True, confirmation_prompt=True)
    if len(password) < 8:
        click.echo("Error: the password must be at least 8 characters.", err=True)
        sys.exit(2)
    email = normalise_email(email)
    factory = make_sessionmaker(make_engine(str(settings.database_url)))
    with factory() as session:
        user = session.scalar(select(User).where(func.lower(User.email) == email))
        if user is None:
            user = User(email=email, role="ADMIN", is_email_verified=True,
                        password_hash=hash_password(password))
            session.add(user)
            verb = "Created"
        else:
            user.role, user.is_active = "ADMIN", True
            user.password_hash = hash_password(password)
            verb = "Promoted"
        session.commit()
    click.echo(f"{verb} admin {email}.")


@main.command()
@click.argument("files", nargs=-1, required=True,
                type=click.Path(exists=True, dir_okay=False, readable=True))
@click.option("--output-dir", required=True, type=click.Path(file_okay=False),
              help="Folder for the sanitized files (created if missing).")
@click.option("--mode", type=click.Choice([mode.value for mode in Mode]),
              default=Mode.BASIC.value, show_default=True,
              help="advanced also rebuilds documents from pixels.")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array of results.")
@click.option("--ocr/--no-ocr", default=None,
              help="advanced mode: add a searchable OCR text layer to the pages rebuilt from "
                   "pixels, or not (needs tesseract-ocr; default SANITAS_OCR, on).")
@click.option("--no-sandbox", is_flag=True,
              help="Run in this process (needs SANITAS_ALLOW_UNSANDBOXED=1; development only).")
@click.option("--password", envvar="SANITAS_PASSWORD", default=None, show_envvar=True,
              help="Opens encrypted inputs (PDF, Word/Excel/PowerPoint 2007+, ZIP); the outputs "
                   "are not encrypted. Prefer the environment variable or --password-file: a "
                   "command-line argument is visible to other users in the process list.")
@click.option("--password-file", type=click.File("r", encoding="utf-8"), default=None,
              help="Read the password from the first line of this file ('-' for stdin).")
@click.option("--policy", "policy_file", type=click.File("r", encoding="utf-8"), default=None,
              help="A sanitization policy as JSON (the body /api/policies takes: rules, "
                   "allowedTypes, output, maxPages; name and description are ignored). Its "
                   "output decides pixels; --mode advanced upgrades output \"same\" to \"pdf\".")
def sanitize(files: tuple[str, ...], output_dir: str, mode: str, as_json: bool,
             ocr: bool | None, no_sandbox: bool, password: str | None, password_file,
             policy_file) -> None:
    """Sanitize FILE... into --output-dir. Exit 0 if all ok, 1 if any was rejected.

    The password (--password, SANITAS_PASSWORD or --password-file) applies to every FILE
    and is never printed."""
    import json
    from pathlib import Path

    from sanitas.engine.report import Result
    from sanitas.sandbox import SandboxError, run_sanitizer

    if password_file is not None:
        if password is not None:
            click.echo("Error: give the password once (--password / SANITAS_PASSWORD or "
                       "--password-file).", err=True)
            sys.exit(2)
        password = password_file.readline().rstrip("\r\n")
    password = password or None
    policy = _read_policy(policy_file, ocr) if policy_file is not None else None
    settings = get_settings()
    if no_sandbox:
        if os.environ.get("SANITAS_ALLOW_UNSANDBOXED") != "1":
            click.echo("Error: --no-sandbox is refused unless SANITAS_ALLOW_UNSANDBOXED=1 "
                       "(it runs hostile files without isolation).", err=True)
            sys.exit(2)
        click.echo("WARNING: sanitizing WITHOUT a sandbox; a hostile file runs with your "
                   "privileges. Development use only.", err=True)
        settings = settings.model_copy(update={"sandbox": "none", "allow_unsandboxed": True})
    if ocr is not None:
        settings = settings.model_copy(update={"ocr": ocr})
    out = Path(output_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        click.echo(f"Error: cannot create the output folder {out}: {exc.strerror}", err=True)
        sys.exit(2)
    results: list[Result] = []
    show_bar = not as_json and len(files) > 1 and sys.stderr.isatty()
    bar = click.progressbar(length=len(files), label="Sanitizing", file=sys.stderr) \
        if show_bar else None
    for index, name in enumerate(files):
        path = Path(name)
        try:
            result = run_sanitizer(path, out, mode=mode, settings=settings,
                                   original_name=path.name, policy=policy,
                                   prewarm=index < len(files) - 1, password=password)
        except SandboxError as exc:
            if index == 0 and not results:
                click.echo(f"Error: {exc}", err=True)
                sys.exit(2)
            result = Result(input=path.name, status="rejected",
                            reason=f"The sandbox failed while processing this file: {exc}")
        result.input = name
        results.append(result)
        if bar is not None:
            bar.update(1)
        elif not as_json:
            _print_result(result)
    if bar is not None:
        bar.render_finish()
        for result in results:
            _print_result(result)
    if as_json:
        click.echo(json.dumps([r.to_json() for r in results], indent=2))
    sys.exit(0 if all(r.status == "ok" for r in results) else 1)


def _read_policy(handle, ocr: bool | None):
    """The policy in the --policy file (the API's body form), or exit 2 naming what is wrong."""
    import json
    from dataclasses import replace

    from sanitas.engine.policy import Policy, PolicyError

    where = getattr(handle, "name", "the policy file")
    try:
        data = json.load(handle)
    except (ValueError, UnicodeError) as exc:
        click.echo(f"Error: --policy {where} is not valid JSON ({exc}).", err=True)
        sys.exit(2)
    errors: dict[str, str] = {}
    if isinstance(data, dict):
        data = dict(data)
        for key in ("name", "description"):  # the API's own fields: the CLI has no use for them
            if key in data and not isinstance(data.pop(key), str | None):
                errors[key] = "must be a string"
    try:
        policy = Policy.from_json(data)
    except PolicyError as exc:
        errors.update(exc.errors)
    if errors:
        listed = "; ".join(f"{field}: {why}" for field, why in errors.items())
        click.echo(f"Error: --policy {where}: {listed}", err=True)
        sys.exit(2)
    if ocr is not None and policy.output != "same":  # --ocr/--no-ocr decides the text layer
        policy = replace(policy, output="pdf+ocr" if ocr else "pdf")
    return policy


def _print_result(result) -> None:
    if result.status == "ok":
        click.echo(f"ok        {result.input} -> {result.output} ({result.duration_ms} ms)")
        outcome = result.outcome()
        click.echo(f"          {outcome.verdict}: {outcome.summary}")
        for finding in result.findings:
            click.echo(f"          {finding.action:9} {finding.kind}: {finding.location}"
                       + (f" ({finding.detail})" if finding.detail else ""))
    else:
        click.echo(f"rejected  {result.input}: {result.reason}")


@main.group()
def remote() -> None:
    """Use a Sanitas server over its API (with an API key)."""


@remote.command("sanitize")
@click.argument("files", nargs=-1, required=True,
                type=click.Path(exists=True, dir_okay=False, readable=True))
@click.option("--url", envvar="SANITAS_URL", required=True, show_envvar=True,
              help="The server, e.g. https://sanitas.example.com")
@click.option("--api-key", default=None,
              help="An API key (sk_live_...); default SANITAS_API_KEY, which keeps it out of "
                   "the process list.")
@click.option("--mode", type=click.Choice([mode.value for mode in Mode]), default=None,
              help="Processing mode (default: the account's default policy).")
@click.option("--policy-id", default=None, help="A policy of yours or your organisation's.")
@click.option("--output-dir", default=".", show_default=True, type=click.Path(file_okay=False),
              help="Folder for the sanitized files (created if missing).")
@click.option("--wait", default=30, show_default=True, type=click.IntRange(0, 60),
              help="Seconds the server holds each call before the client polls instead.")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array of results.")
def remote_sanitize(files: tuple[str, ...], url: str, api_key: str | None, mode: str | None,
                    policy_id: str | None, output_dir: str, wait: int, as_json: bool) -> None:
    """Send FILE... to a Sanitas server and save the clean copies in --output-dir. Exit 0 if
    all came back clean, 1 if any was refused, 2 if a call failed."""
    import json
    from pathlib import Path

    from sanitas.engine.report import Result
    from sanitas.remote import Remote, RemoteError, api_key_from

    try:
        server = Remote.connect(url, api_key_from(api_key))
        out = Path(output_dir)
        out.mkdir(parents=True, exist_ok=True)
    except (RemoteError, OSError) as exc:
        click.echo(f"Error: {exc}", err=True)
        sys.exit(2)
    results: list[Result] = []
    for name in files:
        path = Path(name)
        size = path.stat().st_size
        show = not as_json and sys.stderr.isatty()
        try:
            with click.progressbar(length=size, label=f"Uploading {path.name}", file=sys.stderr,
                                   hidden=not show) as bar:
                result = server.sanitize(path, out, mode=mode, policy_id=policy_id, wait=wait,
                                         progress=bar.update)
        except RemoteError as exc:
            click.echo(f"Error: {name}: {exc}", err=True)
            sys.exit(2)
        result.input = name
        results.append(result)
        if not as_json:
            _print_result(result)
    if as_json:
        click.echo(json.dumps([r.to_json() for r in results], indent=2))
    sys.exit(0 if all(r.status == "ok" for r in results) else 1)


if __name__ == "__main__":
    main()
