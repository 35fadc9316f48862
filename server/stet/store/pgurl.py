"""A PostgreSQL url as Stet shows it (messages, logs): without its password. No driver needed,
so a missing one can be said with the url (engines.py)."""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit


def mask(text: str, url: str | None = None) -> str:
    """`text` with every password it could carry replaced by ***: the url's (user:password@),
    a `password=` parameter, and the literal password wherever else it appears."""
    secrets = set()
    for u in [url] if url else []:
        parts = urlsplit(u)
        if parts.password:
            secrets.add(parts.password)
        secrets.update(m for m in re.findall(r"password=([^&\s]+)", parts.query))
    out = re.sub(r"(postgres(?:ql)?://[^:/@\s]*:)[^@\s]*@", r"\1***@", text)
    out = re.sub(r"(password=)[^&\s]+", r"\1***", out)
    for s in secrets:
        out = out.replace(s, "***")
    return out


def shown(url: str) -> str:
    """The url as Stet shows it: without its password."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if parts.password is not None:
        netloc = netloc.replace(f":{parts.password}@", ":***@", 1)
    return mask(urlunsplit(parts._replace(netloc=netloc)), url)
