"""The session's plan: the list of steps the model keeps with `todo_write`, shown to the user."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

PlanStatus = Literal["pending", "in_progress", "completed"]


class PlanItem(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    content: str
    status: PlanStatus = "pending"
