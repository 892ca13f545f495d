"""One place where tokens become dollars (see the package docstring)."""

from __future__ import annotations

import ipaddress
from functools import cache
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from tui_agent.lazy_dataclass import dataclass

if TYPE_CHECKING:
    from genai_prices.types import ModelPrice

    from tui_agent.vocab import TokenUsage

_MTOK = 1_000_000


@dataclass(frozen=True)
class PriceOverride:
    """A model's prices from config.toml, in USD per million tokens. Input and output are
    needed for a model the table does not know; cache reads and writes then cost what input
    costs (what a server without a cache discount bills), unless given too. For a model the
    table knows, each price given replaces the table's and the others stay."""

    input: float | None = None
    output: float | None = None
    cache_read: float | None = None
    cache_write: float | None = None

    @property
    def empty(self) -> bool:
        return all(v is None for v in (self.input, self.output, self.cache_read, self.cache_write))


@dataclass(frozen=True)
class _Flat:
    input: float
    output: float
    cache_read: float
    cache_write: float

    def cost(self, usage: TokenUsage) -> float:
        return (
            usage.input_other * self.input
            + usage.input_cache_read * self.cache_read
            + usage.input_cache_creation * self.cache_write
            + usage.output * self.output
        ) / _MTOK


class Pricer:
    """Prices one model's requests. `cost` takes ONE request's usage: the table's prices may
    depend on the request's size (a long-context tier), so a session's cost is the sum of its
    requests' costs, never the price of its summed tokens."""

    def __init__(
        self,
        model: str,
        *,
        provider: str,
        base_url: str | None = None,
        override: PriceOverride | None = None,
    ) -> None:
        self.model = model
        self._provider = provider
        self._base_url = base_url
        self._override = override if override is not None and not override.empty else None
        self._flat: _Flat | None = None
        self._known: bool | None = None  # looked up on first use

    @property
    def known(self) -> bool:
        """Whether this model has a price (from config.toml or the table)."""
        if self._known is None:
            self._known, self._flat = self._resolve()
        return self._known

    def warm(self) -> None:
        """Look the model up now (the table's import takes half a second: a loop does it in a
        thread while its first request is out, not after the answer)."""
        _ = self.known

    @property
    def source(self) -> str:
        """Where the prices come from, for `/cost`."""
        if not self.known:
            return "price unknown"
        if self._override is not None:
            return "config.toml" if self._table_price() is None else "genai-prices + config.toml"
        return f"genai-prices {_library_version()}"

    def cost(self, usage: TokenUsage) -> float | None:
        """USD for one request's usage; None when the model has no price."""
        if not self.known:
            return None
        if self._flat is not None:
            return self._flat.cost(usage)
        return _table_cost(self.model, self._provider, self._base_url, usage)

    def _resolve(self) -> tuple[bool, _Flat | None]:
        table = self._table_price()
        override = self._override
        if override is None:
            return table is not None, None
        if table is None:
            if override.input is None or override.output is None:
                return False, None
            read = override.cache_read if override.cache_read is not None else override.input
            write = override.cache_write if override.cache_write is not None else override.input
            return True, _Flat(override.input, override.output, read, write)
        base = _flat_of(table)
        return True, _Flat(
            input=_first(override.input, base.input),
            output=_first(override.output, base.output),
            cache_read=_first(override.cache_read, base.cache_read),
            cache_write=_first(override.cache_write, base.cache_write),
        )

    def _table_price(self) -> ModelPrice | None:
        return _table_lookup(self.model, self._provider, self._base_url)


def usd(amount: float | None) -> str:
    """An amount as people read it: under a dollar to a hundredth of a cent (a step often costs
    less than a cent), above it to the cent."""
    if amount is None:
        return "price unknown"
    if 0 < amount < 0.00005:  # would read $0.0000: not nothing
        return "<$0.0001"
    if amount < 1:
        return f"${amount:.4f}"
    return f"${amount:,.2f}"


def _first(value: float | None, fallback: float) -> float:
    return value if value is not None else fallback


@cache
def _table_lookup(model: str, provider: str, base_url: str | None) -> ModelPrice | None:
    if provider == "scripted":
        return None  # the scripted provider bills nothing; its model name is no real model
    if base_url and _local(base_url):
        return None  # a server of one's own (llama.cpp, vLLM, Ollama): no public price applies
    from genai_prices import data_snapshot

    # The provider is found by its URL (which also tells OpenRouter, or a local server the
    # table does not know, from OpenAI itself), else by its kind.
    try:
        _, info = data_snapshot.get_snapshot().find_provider_model(
            model, None, None if base_url else provider, base_url or None
        )
    except LookupError:
        return None
    prices = info.prices
    if isinstance(prices, list):  # prices by date or time of day: the latest for the base
        return prices[-1].prices if prices else None
    return prices


def _local(url: str) -> bool:
    """A loopback, private or link-local host, or `localhost` (said without loading the table,
    whose import costs half a second: what every run against a local server would pay)."""
    host = urlsplit(url).hostname or ""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_link_local


def _table_cost(model: str, provider: str, base_url: str | None, usage: TokenUsage) -> float:
    from genai_prices import Usage, calc_price

    tokens = Usage(
        input_tokens=usage.input,  # genai-prices counts cached tokens inside input
        cache_read_tokens=usage.input_cache_read,
        cache_write_tokens=usage.input_cache_creation,
        output_tokens=usage.output,
    )
    if base_url:
        result = calc_price(tokens, model, provider_api_url=base_url)
    else:
        result = calc_price(tokens, model, provider_id=provider)
    return float(result.total_price)


def _flat_of(price: ModelPrice) -> _Flat:
    """A table price's base tier, per million tokens (an override of some prices needs the
    others as plain numbers); a cache price the table lacks is billed as input."""

    def base(value: object, fallback: float) -> float:
        if value is None:
            return fallback
        tiered = getattr(value, "base", None)
        return float(tiered if tiered is not None else value)  # type: ignore[arg-type]

    input_price = base(price.input_mtok, 0.0)
    return _Flat(
        input=input_price,
        output=base(price.output_mtok, 0.0),
        cache_read=base(price.cache_read_mtok, input_price),
        cache_write=base(price.cache_write_mtok, input_price),
    )


@cache
def _library_version() -> str:
    from importlib.metadata import version

    return version("genai-prices")
