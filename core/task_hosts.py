"""`allowed_hosts` entries, checked and normalized as Harbor does (harbor 0.26.0 `models/task/config.py`,
`_validate_allowed_host_names`): hostnames, leading-wildcard hostnames (`*.example.com`), IP addresses and
CIDR ranges; never URLs, ports or paths. Entries are lower-cased without a trailing dot, so the egress proxy
compares like with like.
"""

from __future__ import annotations

import re
from ipaddress import ip_address, ip_network

_LABEL = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$")
_NOT_A_HOST = "allowed_hosts entries are hostnames, IP addresses or CIDR ranges, not URLs, ports or paths"


def _is_ip(text: str) -> bool:
    try:
        ip_address(text)
    except ValueError:
        return False
    return True


def _one(entry: str) -> str:
    host = entry.strip().lower().rstrip(".")
    if not host:
        raise ValueError("allowed_hosts entries must be non-empty")
    if "/" in host:  # a CIDR range
        try:
            if "%" in host:
                raise ValueError(host)
            return ip_network(host, strict=True).compressed
        except ValueError:
            raise ValueError(f"{_NOT_A_HOST} (got {entry!r})") from None
    if ":" in host:  # an IPv6 address
        if "%" in host or not _is_ip(host) or ip_address(host).version != 6:
            raise ValueError(f"{_NOT_A_HOST} (got {entry!r})")
        return ip_address(host).compressed
    if "[" in host or "]" in host:
        raise ValueError(f"{_NOT_A_HOST} (got {entry!r})")
    name = host
    if host.startswith("*."):
        name = host[2:]
        if not name or _is_ip(name):
            raise ValueError(f"a wildcard entry names a hostname suffix, not an IP address (got {entry!r})")
    elif "*" in host:
        raise ValueError(f"wildcards are only a leading '*.' (got {entry!r})")
    if not _is_ip(name) and not all(_LABEL.match(label) for label in name.split(".")):
        raise ValueError(f"{_NOT_A_HOST}: letters, digits, hyphens and dots only (got {entry!r})")
    return host


def validate_allowed_hosts(hosts: list[str]) -> list[str]:
    return [_one(h) for h in hosts]
