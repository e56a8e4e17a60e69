"""Runtime settings read from environment variables.

Every setting has a safe default for local development, so tests need no
environment at all. Secrets (gateway key, webhook secret, API token secret) have
no default in production mode: :func:`load_settings` refuses to start without
them when ``SHOPCORE_ENV=production``.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache


@dataclass(frozen=True)
class Settings:
    env: str = "development"
    pg_base_url: str = "https://sandbox.pg.example.invalid/v2"
    pg_api_key: str = "sk_test_local"
    pg_webhook_secret: str = "whsec_local"
    pg_timeout_seconds: float = 5.0
    smtp_host: str = "localhost"
    smtp_port: int = 1025
    mail_from: str = "no-reply@shopcore.example.invalid"
    sms_sender_number: str = "1588-0000"
    email_dry_run: bool = True
    api_token_secret: str = "dev-token-secret"
    api_token_ttl_minutes: int = 60

    @property
    def is_production(self) -> bool:
        return self.env == "production"


_REQUIRED_IN_PRODUCTION = (
    "SHOPCORE_PG_API_KEY",
    "SHOPCORE_PG_WEBHOOK_SECRET",
    "SHOPCORE_API_TOKEN_SECRET",
)


def _flag(value: str | None, default: bool) -> bool:
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


@lru_cache(maxsize=1)
def load_settings() -> Settings:
    """Build :class:`Settings` from ``SHOPCORE_*`` variables (cached per process)."""
    env = os.environ.get("SHOPCORE_ENV", "development")
    if env == "production":
        missing = [name for name in _REQUIRED_IN_PRODUCTION if not os.environ.get(name)]
        if missing:
            raise RuntimeError(f"missing required settings: {', '.join(missing)}")
    defaults = Settings()
    return Settings(
        env=env,
        pg_base_url=os.environ.get("SHOPCORE_PG_BASE_URL", defaults.pg_base_url),
        pg_api_key=os.environ.get("SHOPCORE_PG_API_KEY", defaults.pg_api_key),
        pg_webhook_secret=os.environ.get("SHOPCORE_PG_WEBHOOK_SECRET", defaults.pg_webhook_secret),
        pg_timeout_seconds=float(os.environ.get("SHOPCORE_PG_TIMEOUT", defaults.pg_timeout_seconds)),
        smtp_host=os.environ.get("SHOPCORE_SMTP_HOST", defaults.smtp_host),
        smtp_port=int(os.environ.get("SHOPCORE_SMTP_PORT", defaults.smtp_port)),
        mail_from=os.environ.get("SHOPCORE_MAIL_FROM", defaults.mail_from),
        sms_sender_number=os.environ.get("SHOPCORE_SMS_SENDER", defaults.sms_sender_number),
        email_dry_run=_flag(os.environ.get("SHOPCORE_EMAIL_DRY_RUN"), env != "production"),
        api_token_secret=os.environ.get("SHOPCORE_API_TOKEN_SECRET", defaults.api_token_secret),
        api_token_ttl_minutes=int(os.environ.get("SHOPCORE_TOKEN_TTL", defaults.api_token_ttl_minutes)),
    )
