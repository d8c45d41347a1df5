"""Settings, read from SANITAS_* environment variables (see README for the full list)."""

from __future__ import annotations

import os
import secrets
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, PrivateAttr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from sanitas.plans import PlanTable, load_plans

INSECURE_SECRETS = {"", "changeme", "change-me", "secret", "dev", "development"}


MB = 1024 * 1024
GB = 1024 * MB


WILDCARD_HOSTS = {"", "0.0.0.0", "::"}  # noqa: S104 - names of a bind to every interface


def listen_url(host: str, port: int) -> str:
    """The URL of `sanitas serve` listening on host:port, as this machine opens it: a wildcard
    bind (0.0.0.0, ::) is not an address, so its loopback stands in."""
    if host in WILDCARD_HOSTS:
        host = "::1" if host == "::" else "127.0.0.1"
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


class Settings(BaseSettings):
    # hide_input_in_errors: a refused setting's message must not echo the others (secrets).
    model_config = SettingsConfigDict(env_prefix="SANITAS_", extra="ignore",
                                      hide_input_in_errors=True)

    env: Literal["development", "production"] = "development"
    # Log lines: "json" or "text" (default: json in production, text otherwise; logs.py).
    log_format: Literal["json", "text"] | None = None
    # GET /metrics answers only `Authorization: Bearer <this>`; unset, it is a 404 (metrics.py).
    metrics_token: str | None = Field(default=None, repr=False)
    # `sanitas worker` serves its own /metrics on this port (same token rule); 0: none.
    metrics_port: int = 0
    metrics_host: str = "0.0.0.0"  # noqa: S104 - a worker is scraped from its pod's address
    data_dir: Path = Path("./data")
    database_url: str | None = None
    secret_key: str | None = None
    # Base of the links in e-mails and of the Google callback. Unset (or empty): the address
    # `serve` listens on, http://{host}:{port}, a wildcard bind read as loopback (listen_url).
    public_url: str = ""
    host: str = "127.0.0.1"
    port: int = 8000

    # Tokens
    access_token_ttl_seconds: int = 900
    refresh_token_ttl_days: int = 30
    email_verification_ttl_hours: int = 48
    password_reset_ttl_minutes: int = 60

    # Email: SMTP when smtp_host is set, else the outbox folder + log.
    smtp_host: str | None = None
    smtp_port: int = 587
    smtp_username: str | None = None
    smtp_password: str | None = None
    smtp_starttls: bool = True
    smtp_ssl: bool = False  # implicit TLS (port 465) instead of STARTTLS
    mail_from: str = "Sanitas <no-reply@sanitas.local>"

    # Google sign-in (OpenID Connect)
    google_client_id: str | None = None
    google_client_secret: str | None = None
    google_discovery_url: str = "https://accounts.google.com/.well-known/openid-configuration"
    # Default: {public_url}/api/auth/google/callback (register this URI at Google).
    google_redirect_uri: str | None = None

    # Brute-force limits: attempts per window, per IP and per account. Sign-in counts per
    # IP, per IP and account (login_per_account), and per account only from addresses the
    # account has not signed in from lately (login_account_ceiling): see auth/routes.py.
    rate_limit_window_seconds: int = 900
    rate_limit_login_per_ip: int = 20
    rate_limit_login_per_account: int = 10
    rate_limit_login_account_ceiling: int = 50
    rate_limit_register_per_ip: int = 10
    rate_limit_register_per_account: int = 5
    rate_limit_reset_per_ip: int = 10
    rate_limit_reset_per_account: int = 5
    rate_limit_contact_per_ip: int = 5
    rate_limit_contact_per_account: int = 3
    # Password changes (PUT /api/auth/password): attempts per account and per source address,
    # so a stolen session cannot guess the current password (a success clears the account's).
    rate_limit_password_per_ip: int = 20
    rate_limit_password_per_account: int = 10
    # Calls per minute each API key may make (counted in the database, across processes).
    api_key_calls_per_minute: int = 120
    # Reverse proxies (IPs or CIDR networks) whose X-Forwarded-For is believed when telling
    # clients apart; e.g. SANITAS_TRUSTED_PROXIES='["127.0.0.1"]'. Empty: the TCP peer.
    trusted_proxies: list[str] = Field(default_factory=list)
    # `sanitas serve`'s connections (http_limits.py): a request head (line and headers) not
    # complete this many seconds after the connection opened, or after the previous answer on
    # it, closes the connection (408 when part of it came); and connections open at once from
    # one client address, per API process (0: no cap), beyond which a new one is answered 429
    # and closed. The trusted proxies above are not capped (they carry many clients).
    http_head_timeout_seconds: float = 10.0
    http_connections_per_address: int = 64
    # Admission control per API process (see sanitas/web/admission.py): calls under way at once
    # per user (or per address without a token), refused beyond with 429; calls holding a
    # database session at once, waiting at most api_queue_seconds beyond, then 503.
    user_concurrency: int = 8
    api_workers: int = 1  # API processes of `sanitas serve` (see `serve --workers`)
    api_concurrency: int = 24
    api_queue_seconds: float = 10.0

    # Files and processing
    file_ttl_hours: int = 24
    # The status page's preview (GET /api/process/preview/{id}): a PNG of the sanitized
    # output's first page or picture, drawn by the job's sandbox after its result, at most
    # preview_max_side pixels a side (0: no previews), within preview_seconds more.
    preview_max_side: int = Field(default=800, ge=0, le=4096)
    preview_seconds: float = Field(default=10.0, gt=0, le=300)
    # POST /api/process/download-batch: file ids one ZIP may hold.
    download_batch_max_files: int = Field(default=100, ge=1, le=10000)
    # Compliance reports (sanitas/reports/), per account and the same on every plan (their
    # bytes count against the plan's storage quota): reports waiting or being generated at
    # once, and reports kept (any status, until the expiry sweep deletes them); beyond either
    # a request answers 429 with Retry-After. -1 = no limit. A report is deleted (row and
    # blob) report_ttl_hours after it was requested; unset: file_ttl_hours.
    report_max_pending: int = 3
    report_max_stored: int = 20
    report_ttl_hours: int | None = None
    # Below this much free space where the data dir (or local storage) lives, /health reports
    # storage degraded and uploads answer 507 (sanitas/datadir/diskspace.py); 0 turns the check off.
    min_free_bytes: int = 512 * MB
    executor: Literal["local", "celery"] = "local"
    executor_workers: int = Field(default_factory=lambda: os.cpu_count() or 2)
    broker_url: str = "redis://127.0.0.1:6379/0"
    job_heartbeat_timeout_seconds: int = 120
    expiry_sweep_interval_seconds: int = 300
    job_max_attempts: int = 3  # infrastructure faults (SandboxError) only; hostile files: 1
    job_retry_delay_seconds: int = 5  # doubled at each further attempt
    executor_poll_interval_seconds: float = 2.0  # local: how often rows are re-scanned
    executor_nice: int = 10  # local: CPU niceness of job threads and their sandboxes (0 = off)
    # While other accounts' jobs wait, no account is given more than this share of the workers
    # (at least one; both executors); the same share of the ICAP and mail filter slots per
    # client or sender domain. With nobody else waiting an account may use them all.
    executor_max_share: float = Field(0.5, gt=0, le=1)
    # local: workers beside executor_workers that only take small quick jobs (a basic clean of
    # at most executor_express_max_bytes, of a kind cleaned without LibreOffice), so a short
    # file never waits behind the business documents holding every worker (0 = none).
    executor_express_workers: int = Field(1, ge=0, le=8)
    executor_express_max_bytes: int = Field(1 * MB, ge=0)
    celery_recover_interval_seconds: int = 60  # celery: re-send waiting/stale jobs

    # Webhooks (sanitas/webhooks/). Endpoints on loopback, private, link-local or reserved
    # addresses are refused unless webhook_allow_private (development and tests only).
    webhook_allow_private: bool = False
    # The first retry's delay; later ones are multiples of it (about a day in all at 30 s).
    webhook_retry_base_seconds: float = 30.0
    webhook_timeout_seconds: float = 5.0  # each step of an attempt: connect, send, answer
    # The whole attempt (name resolution, connect, TLS, send, the answer's head), at most.
    webhook_deadline_seconds: float = Field(default=15.0, gt=0)
    webhook_senders: int = Field(default=4, ge=1)  # attempts at once per sending process
    # One account's attempts under way at once: at most this share of the senders (at least 1).
    webhook_account_share: float = Field(default=0.5, gt=0, le=1)
    webhook_poll_interval_seconds: float = 2.0  # how often the sender looks for due deliveries
    # A PEM file of further CAs trusted for HTTPS endpoints (an organisation's own), beside the
    # public ones (certifi's bundle, as httpx uses).
    webhook_ca_bundle: Path | None = None

    storage: Literal["local", "s3"] = "local"
    s3_bucket: str = "sanitas"
    s3_endpoint_url: str | None = None
    s3_region: str = "us-east-1"
    s3_access_key_id: str | None = None
    s3_secret_access_key: str | None = None
    s3_prefix: str = ""  # key prefix inside the bucket
    s3_create_bucket: bool = False  # create the bucket on start if it is missing

    sandbox: Literal["bwrap", "none"] = "bwrap"
    allow_unsandboxed: bool = False
    sandbox_user: str = "sanitas-sandbox"
    # Per-job cgroup: auto | off | required | a delegated cgroup v2 path (sandbox/cgroups.py).
    sandbox_cgroup: str = "auto"
    # A spare sandbox for office files also starts LibreOffice idle, so the job's first
    # conversion skips LibreOffice's start (engine/libreoffice.py); off saves the idle
    # instance's memory (about 100 MB per office spare) at the cost of that start.
    sandbox_warm_office: bool = True
    # Files that do not need LibreOffice run in process trees forked from one warm template
    # (sandbox/forked.py): each job still gets namespaces, tmpfs, cgroup and filter of its own,
    # and skips the Python start and the engine's imports. Off: a fresh sandbox per job.
    sandbox_prefork: bool = True
    # Advanced mode adds an OCR text layer to the pages it rebuilds from pixels (needs
    # tesseract-ocr; a policy whose output is "pdf" turns it off), in these tesseract languages
    # ("eng+deu"; each needs its tesseract-ocr-LANG package).
    ocr: bool = True
    ocr_languages: str = Field(default="eng",
                               pattern=r"^[A-Za-z0-9_]{1,40}(\+[A-Za-z0-9_]{1,40}){0,9}$")
    # A page whose own text is all shown in its pixels (engine/shown_text.py) keeps that text as
    # its layer, exact and in milliseconds; the rest are recognised. Off: OCR reads every page.
    ocr_own_text: bool = True

    # ICAP server (`sanitas icap`, sanitas/icap/; docs/icap.md).
    icap_host: str = "127.0.0.1"
    icap_port: int = 1344
    # Bodies (after gzip/deflate decoding) above this many bytes are not sanitized: they pass
    # unchanged or are blocked per icap_oversize_action.
    icap_max_body_bytes: int = 100 * MB
    icap_oversize_action: Literal["pass", "block"] = "block"
    # Bodies the engine does not recognise as a type it handles (video, fonts, ...).
    icap_unsupported_action: Literal["pass", "block"] = "pass"
    # Bodies in a Content-Encoding other than gzip/deflate (br, zstd...) cannot be inspected.
    icap_undecodable_action: Literal["pass", "block"] = "block"
    # Kinds or families the engine knows that ICAP leaves alone, e.g. '["html", "text"]'.
    icap_pass_types: list[str] = Field(default_factory=list)
    icap_preview_bytes: int = 64 * 1024  # advertised in OPTIONS
    icap_workers: int = 0  # bodies sanitized at once; 0: SANITAS_EXECUTOR_WORKERS
    icap_max_connections: int = 64
    # Connections one client address may hold at once (0: half of icap_max_connections), so
    # one address cannot take them all; advertised as OPTIONS' Max-Connections.
    icap_max_connections_per_client: int = Field(default=0, ge=0)
    icap_timeout_seconds: float = 30.0  # idle time allowed on a connection between reads
    # TLS (icaps://): certificate chain and key (PEM), both or neither; with a client CA the
    # proxies must present a certificate it signed (icap/tls.py).
    icap_tls_cert: Path | None = None
    icap_tls_key: Path | None = None
    icap_tls_client_ca: Path | None = None
    # Audit: each transaction becomes a file history row of icap_service_account (created on
    # start, ENTERPRISE, no password); nothing of the body is kept either way.
    icap_audit: bool = False
    icap_service_account: str = "icap@sanitas.local"

    # Mail filter (`sanitas mail`, sanitas/mailfilter/; docs/mail.md): an after-queue SMTP
    # content filter. It listens on mail_listen and re-injects each cleaned message to
    # mail_next_hop (host:port) with the original envelope.
    mail_listen: str = "127.0.0.1:10025"
    mail_next_hop: str = "127.0.0.1:10026"
    mail_policy: str = "basic"  # 'basic', 'advanced' or an organisation-wide policy's id
    # Messages above this size are refused at SMTP (552; announced with SIZE).
    mail_max_message_bytes: int = Field(default=50 * MB, ge=1024, le=64 * MB)
    mail_workers: int = 0  # messages cleaned at once; 0: SANITAS_EXECUTOR_WORKERS
    mail_max_connections: int = Field(default=32, ge=1)
    mail_timeout_seconds: float = 300.0  # idle time allowed on an SMTP connection
    mail_next_hop_timeout_seconds: float = 60.0  # each step of the re-injection
    # A footer (a short text part) saying in words what was done to the message.
    mail_footer: bool = False
    # Originals are kept sealed (AES-256-GCM) in storage this many days, for release by an
    # admin; 0 keeps none.
    mail_hold_days: int = Field(default=14, ge=0)
    # Audit: each message becomes a file history row of mail_service_account (as ICAP's).
    mail_audit: bool = False
    mail_service_account: str = "mail@sanitas.local"
    # `GET /metrics` of the mail filter (sanitas_mail_*), on metrics_host; 0: not served.
    mail_metrics_port: int = 0

    # Plans (sanitas/plans.py: labels, prices, limits, capabilities per role). A JSON or TOML
    # file merged over the defaults; and, per role, limits as JSON (SANITAS_ROLE_LIMITS, every
    # field optional: uploads_per_month, max_file_size, storage_quota, max_files_per_upload,
    # modes, high_priority). Both are checked here: a bad one stops the start naming it.
    plans_file: Path | None = None
    role_limits: dict[str, Any] = Field(default_factory=dict)
    _plans: PlanTable | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _resolve(self) -> Settings:
        self.data_dir = self.data_dir.resolve()
        if self.database_url is None:
            self.database_url = f"sqlite:///{self.data_dir / 'sanitas.db'}"
        if not self.public_url:
            self.public_url = listen_url(self.host, self.port)
        self._plans = load_plans(self.plans_file, self.role_limits)
        if self.env == "production" and (
                not self.secret_key or self.secret_key.strip().lower() in INSECURE_SECRETS
                or len(self.secret_key) < 32):
            raise ValueError(
                "SANITAS_SECRET_KEY must be set to a random value of at least 32 "
                "characters in production (e.g. `python3 -c 'import secrets; "
                "print(secrets.token_urlsafe(48))'`)."
            )
        return self

    @property
    def files_dir(self) -> Path:
        return self.data_dir / "files"

    @property
    def outbox_dir(self) -> Path:
        return self.data_dir / "outbox"

    @property
    def is_sqlite(self) -> bool:
        return str(self.database_url).startswith("sqlite")

    @property
    def plans(self) -> PlanTable:
        """The plan table, resolved from the defaults and the two settings above."""
        assert self._plans is not None
        return self._plans

    def signing_key(self) -> str:
        """The secret key; in development one is generated once and kept in the data dir."""
        if self.secret_key:
            return self.secret_key
        path = self.data_dir / "secret_key"
        if not path.exists():
            self.data_dir.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as fh:
                fh.write(secrets.token_urlsafe(48))
        self.secret_key = path.read_text().strip()
        return self.secret_key


@lru_cache
def get_settings() -> Settings:
    return Settings()
