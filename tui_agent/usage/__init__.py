"""Money: what a model's tokens cost (`Pricer`), and how an amount is written (`usd`).

Prices come from Pydantic's `genai-prices` table, bundled with the package and read offline
(it is imported only when the first price is needed: half a second the headless path does not
pay before its first answer), or from a model's `price_*_per_mtok` settings in config.toml,
which win. A model neither knows has no price: its cost is `None`, shown as "price unknown",
never a guess.
"""

from tui_agent.usage._prices import PriceOverride, Pricer, usd

__all__ = ["PriceOverride", "Pricer", "usd"]
