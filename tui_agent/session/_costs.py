"""Prices for a session: the model's `price_*_per_mtok` settings from config.toml, and what a
logged session cost (for `tui-agent sessions` and exports).

A session's log names its provider kind, its model and the scheme and host of its endpoint
(`SessionMeta.api_host`; never a path or query, which may carry a key), which is what the price
table needs to tell OpenAI from a local server that serves a model under the same name.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from urllib.parse import urlsplit

from tui_agent.context import EventLogError, Record, SessionMeta, read_log
from tui_agent.loop import events as ev
from tui_agent.loop.costs import Budget, CostLine, Metering, priced
from tui_agent.loop.replay import replay
from tui_agent.session._config import Config, ConfigError, load_config
from tui_agent.session._resolve import provider_for_model
from tui_agent.usage import PriceOverride, Pricer


def price_override(settings: Config, model: str) -> PriceOverride | None:
    """The prices config.toml sets for `model` (its [models] table by name, or by `model` id)."""
    entry = settings.models.get(model) or next(
        (m for m in settings.models.values() if m.model == model), None
    )
    if entry is None:
        return None
    return PriceOverride(
        input=entry.price_input_per_mtok,
        output=entry.price_output_per_mtok,
        cache_read=entry.price_cache_read_per_mtok,
        cache_write=entry.price_cache_write_per_mtok,
    )


def api_host(base_url: str | None) -> str | None:
    """`scheme://host[:port]` of an endpoint, what the log keeps of it."""
    if not base_url:
        return None
    parts = urlsplit(base_url)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}" if parts.scheme and host else None


def logged_cost(
    records: Sequence[Record], events: Sequence[ev.LoopEvent]
) -> tuple[tuple[ev.LoopEvent, ...], CostLine]:
    """A logged session's replayed events with their costs (see `loop.costs.priced`), and what
    it spent, each step priced for its model."""
    return priced(events, session_pricers(records))


def session_pricers(records: Sequence[Record]) -> Callable[[str | None], Pricer]:
    """The prices of the model a logged session names, and of each other model one of its
    steps names (a custom command's `model:`), with config.toml's overrides."""
    try:
        settings = load_config()
    except ConfigError:
        settings = Config()  # a broken file is said where it matters: when a loop opens
    meta = next((r for r in records if isinstance(r, SessionMeta)), None)
    session = Pricer("", provider="scripted")
    if meta is not None and meta.model:
        session = Pricer(
            meta.model,
            provider=meta.provider or "",
            base_url=meta.api_host,
            override=price_override(settings, meta.model),
        )
    metering = Metering(session, Budget(), others=lambda model: named_pricer(settings, model))
    return metering.pricer_for


def named_pricer(settings: Config, model: str) -> Pricer:
    """A model's prices known only by its id (a logged step's): its provider as `/model`
    would pick it, config.toml's overrides."""
    provider = provider_for_model(settings, model)
    configured = settings.providers.get(provider)
    kind = configured.kind if configured is not None else provider
    return Pricer(model, provider=kind, override=price_override(settings, model))


def session_cost(log: Path) -> CostLine | None:
    """The cost of the session whose event log is `log` (`tui-agent sessions`); None when the
    log cannot be read (opening the session says why)."""
    try:
        records = read_log(log)
    except (EventLogError, OSError):
        return None
    return logged_cost(records, replay(records, context_window=0).events)[1]
