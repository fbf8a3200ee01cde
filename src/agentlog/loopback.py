"""Whether a host only reaches this machine: the one rule behind ``agentlog
serve``'s bind and its ``Host`` check (DNS rebinding: a name other than
``localhost`` is refused, an address literal only when it is loopback, any of
``127.0.0.0/8`` and ``::1``) and ``agentlog mcp --http``'s bind."""

from __future__ import annotations

import ipaddress


def is_loopback(host: str | None) -> bool:
    """Whether ``host`` (``localhost``, an IPv4 or IPv6 address, brackets
    allowed: ``[::1]``) names this machine only; ``False`` for ``None``, other
    names and other addresses."""
    if not host:
        return False
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
