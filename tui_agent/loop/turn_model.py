"""A turn on another model than the session's: a custom command's `model:` front matter.

A prompt may ask for a model (`LoopApi.submit(model=)`); the front end's `TurnModels` resolves
the name (as `/model` does) into a `TurnModel`, or refuses it with `ModelRefused` before
anything is queued. `ModelRouter` is the provider a loop and its sub-agents send every request
through: the session's, or while a turn opened by such prompts runs, that turn's model (on the
session's provider under another model id, or on a provider of its own, built when the turn
begins and closed when it ends). So a sub-agent started in that turn runs on the turn's model
too, and the cost ledger prices each step with the pricer of the model that served it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

from tui_agent.lazy_dataclass import dataclass
from tui_agent.llm import Provider
from tui_agent.loop.api import ModelRefused
from tui_agent.usage import Pricer
from tui_agent.vocab import LLMRequest, StreamEvent

__all__ = ["ModelRefused", "ModelRouter", "TurnModel", "TurnModels"]


@dataclass(frozen=True)
class TurnModel:
    model: str  # the id the turn's requests name
    pricer: Pricer
    max_output_tokens: int | None = None
    echo_reasoning: bool = False
    # Another provider or endpoint than the session's: built for the turn, closed after it.
    open_provider: Callable[[], Provider] | None = None


# Resolves a model name for one turn; raises `ModelRefused`.
TurnModels = Callable[[str], TurnModel]


class ModelRouter:
    """The provider every request of a loop (and of its sub-agents) goes through."""

    def __init__(self, session: Provider, choose: TurnModels | None = None) -> None:
        self.session = session
        self.name = session.name
        self.model = session.model  # what requests name now
        self._choose = choose
        self.turn: TurnModel | None = None
        self._own: Provider | None = None

    def choose(self, name: str) -> TurnModel:
        if self._choose is None:
            raise ModelRefused(f"this session cannot switch to {name} for one turn")
        return self._choose(name)

    def begin(self, turn: TurnModel | None) -> None:
        """The running turn's model from now on (None: the session's)."""
        self.turn = turn
        self.model = turn.model if turn is not None else self.session.model
        if turn is not None and turn.open_provider is not None:
            self._own = turn.open_provider()

    def end(self) -> Provider | None:
        """Back on the session's model; returns the turn's own provider, for the caller to
        close (a request of the turn may still be unwinding)."""
        own, self._own, self.turn = self._own, None, None
        self.model = self.session.model
        return own

    def pricer(self, session: Pricer) -> Pricer:
        """The pricer of the model serving requests now."""
        return self.turn.pricer if self.turn is not None else session

    def max_tokens(self, session: int | None) -> int | None:
        return self.turn.max_output_tokens if self.turn is not None else session

    def echo_reasoning(self, session: bool) -> bool:
        return self.turn.echo_reasoning if self.turn is not None else session

    def stream(self, request: LLMRequest) -> AsyncIterator[StreamEvent]:
        return (self._own or self.session).stream(request)

    async def aclose(self) -> None:
        own = self.end()
        if own is not None:
            await own.aclose()
        await self.session.aclose()
