"""Running a recorded session again through the real machines (`tui-agent replay`).

Not to be confused with `loop.replay`, which turns a log back into the loop events a resumed
session shows, without running anything. Here the log is a script: the kernel's machines, the
service and the tool scheduler run again, the model and the tools answer from the log, and
the person's inputs come in where the log has them. `check` compares every record the rerun
writes with the log's (`Divergence`: the first that differs); the player (`ui.replay_player`)
shows the rerun in the app, paced by the person.
"""

from tui_agent.rerun._check import Verdict, check_log, check_path
from tui_agent.rerun._conductor import Conductor, Divergence, Pace
from tui_agent.rerun._pace import SPEEDS, PlayerPace
from tui_agent.rerun._script import Unreplayable

__all__ = [
    "SPEEDS",
    "Conductor",
    "Divergence",
    "Pace",
    "PlayerPace",
    "Unreplayable",
    "Verdict",
    "check_log",
    "check_path",
]
