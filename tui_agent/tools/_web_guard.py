"""Which network addresses `web_fetch` may connect to: the guard against a prompt-injected
request to the person's own network.

A page the model reads may tell it to fetch `http://192.168.1.1/admin` or the cloud metadata
service at `169.254.169.254`; the person's machine can reach those, the internet cannot. So a
host name is resolved here, every address it resolves to is checked, and the connection goes
to one of the checked addresses (never to the name again: a second lookup could answer
differently, which is DNS rebinding). Refused unless `web.allow_private = true`: loopback,
private (RFC 1918, IPv6 unique-local), link-local, unspecified, shared CGNAT (100.64/10),
documentation and other reserved ranges, multicast, and an IPv4 address wrapped in IPv6
(`::ffff:10.0.0.1`) is judged as the IPv4 address it carries.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Awaitable, Callable
from dataclasses import field

from tui_agent.lazy_dataclass import dataclass

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], Awaitable[list[str]]]

_CGNAT = ipaddress.ip_network("100.64.0.0/10")


class AddressRefused(Exception):
    """A URL whose host is, or resolves to, an address the guard refuses; says which and why."""


async def resolve_host(host: str, port: int) -> list[str]:
    """Every address `host` resolves to (the system resolver, off the event loop)."""
    infos = await asyncio.get_running_loop().getaddrinfo(
        host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP
    )
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def kind_of(address: IPAddress) -> str | None:
    """What makes `address` not a public internet address ("loopback", "private", ...), or
    None when it is one."""
    address = unwrapped(address)
    checks: tuple[tuple[bool, str], ...] = (
        (address.is_loopback, "loopback"),
        (address.is_unspecified, "unspecified"),
        (address.is_link_local, "link-local"),
        (address.is_multicast, "multicast"),
        (isinstance(address, ipaddress.IPv4Address) and address in _CGNAT, "shared (CGNAT)"),
        (address.is_private, "private"),
        (not address.is_global, "reserved"),
    )
    return next((name for hit, name in checks if hit), None)


@dataclass(frozen=True)
class AddressGuard:
    """`allow_private`: the person's `web.allow_private`. `exempt`: addresses let through
    although the rule would refuse them (tests reach their loopback server this way while
    every other address is still judged by the rule)."""

    allow_private: bool = False
    exempt: frozenset[IPAddress] = frozenset()
    resolver: Resolver = field(default=resolve_host, compare=False)

    def refusal(self, address: IPAddress) -> str | None:
        """Why `address` is refused ("a private address"), or None."""
        address = unwrapped(address)
        if self.allow_private or address in self.exempt:
            return None
        kind = kind_of(address)
        return None if kind is None else f"a {kind} address"

    async def checked_address(self, host: str, port: int) -> IPAddress:
        """The address to connect to for `host`: every address it resolves to must pass (one
        bad answer is enough to refuse: it is what a rebinding attack would use next)."""
        named = True
        try:
            addresses = [ipaddress.ip_address(host.strip("[]"))]
            named = False
        except ValueError:
            try:
                found = await self.resolver(host, port)
            except OSError as exc:
                raise AddressRefused(f"cannot resolve {host}: {exc.strerror or exc}") from None
            addresses = [ipaddress.ip_address(a.split("%")[0]) for a in found]
        if not addresses:
            raise AddressRefused(f"{host} resolves to no address")
        for address in addresses:
            why = self.refusal(address)
            if why is not None:
                shown = unwrapped(address)
                said = f"{host} resolves to {shown}, {why}" if named else f"{shown} is {why}"
                raise AddressRefused(
                    f"{said}; web_fetch reaches only public addresses, so that a page cannot "
                    "send it into this machine's own network (web.allow_private = true in "
                    "config.toml allows it)"
                )
        return addresses[0]


def unwrapped(address: IPAddress) -> IPAddress:
    """An IPv4 address wrapped in IPv6 (`::ffff:10.0.0.1`) as the IPv4 address it carries."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address
