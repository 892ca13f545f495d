"""`tui-agent acp` driven by the official ACP TypeScript SDK, an independent client process
(`ts_client_flow.mjs`): every message both ways is checked against the SDK's schema
validators, and what an editor gets is asserted here (diff before approval, a command in the
editor's terminal, commands, the model option, images, session/list, load with the plan)."""

from __future__ import annotations

import base64
import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from tests.support.node import node_packages
from tests.support.openai_server import scripted_openai_server

FLOW = Path(__file__).with_name("ts_client_flow.mjs")
# The first test also waits for the shared run: a fresh machine's `npm ci`, then two agents.
pytestmark = pytest.mark.timeout(240)


@pytest.fixture(scope="module")
def flows(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], list[Any]]:
    """One run of the TypeScript client's flows (three agent processes), shared by the tests."""
    sdk = node_packages("acp")
    work = tmp_path_factory.mktemp("ts-acp")
    workspace = work / "ws"
    workspace.mkdir()
    (workspace / "a.txt").write_text("alpha\n")
    image = io.BytesIO()
    Image.new("RGB", (32, 24), "blue").save(image, format="PNG")
    with scripted_openai_server([{"text": "A blue square."}]) as server:
        spec = {
            "agent": [sys.executable, "-m", "tui_agent", "acp"],
            "workspace": str(workspace),
            "work": str(work),
            "openai": server.base_url,
            "png": base64.b64encode(image.getvalue()).decode(),
        }
        (work / "spec.json").write_text(json.dumps(spec))
        done = subprocess.run(
            ["node", str(FLOW), str(sdk), str(work / "spec.json")],
            capture_output=True,
            text=True,
            timeout=120,
        )
        requests = list(server.requests)
    assert done.returncode == 0, done.stderr[-4000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    result["workspace"] = str(workspace)
    return result, requests


def test_every_message_validates_against_the_sdks_schema(
    flows: tuple[dict[str, Any], list[Any]],
) -> None:
    result, _ = flows
    assert result["checked"] > 50
    assert result["invalid"] == []


def test_an_edit_is_asked_about_with_its_diff_before_the_write(
    flows: tuple[dict[str, Any], list[Any]],
) -> None:
    edit = flows[0]["edit"]
    asked = edit["asked"][0]
    assert asked["onDisk"] == "alpha\n"
    (diff,) = asked["toolCall"]["content"]
    assert (diff["type"], diff["oldText"], diff["newText"]) == ("diff", "alpha\n", "beta\n")
    card = next(c for c in edit["cards"] if c["kind"] == "edit")
    assert asked["toolCall"]["title"] == card["title"]
    assert asked["toolCall"]["rawInput"] == card["rawInput"]
    assert Path(flows[0]["workspace"], "a.txt").read_text() == "beta\n"


def test_a_command_runs_in_the_editors_terminal(flows: tuple[dict[str, Any], list[Any]]) -> None:
    edit = flows[0]["edit"]
    (terminal,) = edit["terminals"]
    assert terminal["argv"][-4:] == ["bash", "--norc", "-c", "echo from-the-terminal"]
    assert terminal["output"] == "from-the-terminal\n" and terminal["released"]
    assert edit["terminalShown"]


def test_commands_plan_and_usage_reach_the_editor(
    flows: tuple[dict[str, Any], list[Any]],
) -> None:
    edit = flows[0]["edit"]
    assert edit["stop"] == ["end_turn", "end_turn"]
    assert {"plan", "usage_update", "available_commands_update"} <= set(edit["kinds"])
    assert {"compact", "model", "status"} <= set(edit["commands"])
    assert f"Session: {edit['sessionId']}" in edit["said"]


def test_list_and_load_bring_back_the_session_with_its_plan(
    flows: tuple[dict[str, Any], list[Any]],
) -> None:
    result, _ = flows
    load = result["load"]
    assert result["edit"]["sessionId"] in load["listed"]
    assert load["replayed"] and load["plan"] == [["edit a.txt"]] and load["usage"] == 1


def test_the_model_option_switches_and_an_image_reaches_it(
    flows: tuple[dict[str, Any], list[Any]],
) -> None:
    result, requests = flows
    model = result["model"]
    (option,) = model["offered"]
    assert option[0:2] == ["model", "m"] and "gpt-4.1" in option[2]
    assert model["now"] == ["gpt-4.1"] and model["stop"] == "end_turn"
    (request,) = requests
    assert request["model"] == "gpt-4.1"
    user = [m for m in request["messages"] if m["role"] == "user"][-1]["content"]
    assert any(part["type"] == "image_url" for part in user)
