"""Sessions on disk: layout, ids, open by id, latest and listing per workspace, no secrets."""

from __future__ import annotations

import os
import re
from pathlib import Path

from tui_agent.context import EventLog, Prompt, SessionMeta, TurnBegin
from tui_agent.session import AppPaths, Session, list_sessions, parse_config, resolve
from tui_agent.vocab import user_message


def _workspace(tmp_path: Path, name: str = "project") -> Path:
    path = tmp_path / name
    path.mkdir()
    return path


def _touch(session: Session, mtime: float) -> None:
    session.events_path.touch()
    os.utime(session.events_path, (mtime, mtime))


def test_create_lays_out_the_session_under_tui_agent_home(tmp_path: Path) -> None:
    session = Session.create(_workspace(tmp_path), now=1_795_990_000.0)

    home = Path(os.environ["TUI_AGENT_HOME"])
    assert session.dir == home / "sessions" / session.session_id
    assert session.events_path == session.dir / "events.jsonl"
    assert session.spill_dir.is_dir()
    assert re.fullmatch(r"20261129-2\d{5}-[0-9a-f]{6}", session.session_id)


def test_ids_sort_by_creation_time(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)

    early = Session.create(workspace, now=1_000_000_000.0)
    late = Session.create(workspace, now=1_900_000_000.0)

    assert early.session_id < late.session_id


def test_open_by_id_returns_the_same_session(tmp_path: Path) -> None:
    created = Session.create(_workspace(tmp_path))

    opened = Session.open(created.session_id)

    assert opened == created


def test_open_unknown_or_unsafe_ids_finds_nothing(tmp_path: Path) -> None:
    Session.create(_workspace(tmp_path))

    assert Session.open("20990101-000000-abcdef") is None
    assert Session.open("../workspaces") is None
    assert Session.open("") is None


def test_latest_for_is_the_most_recently_active_session(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    older = Session.create(workspace, now=1_000.0)
    newer = Session.create(workspace, now=2_000.0)
    _touch(older, 5_000.0)
    _touch(newer, 3_000.0)

    assert Session.latest_for(workspace) == older


def test_latest_for_only_sees_its_own_workspace(tmp_path: Path) -> None:
    mine = _workspace(tmp_path, "mine")
    theirs = _workspace(tmp_path, "theirs")
    own = Session.create(mine)
    Session.create(theirs)

    assert Session.latest_for(mine) == own
    assert Session.latest_for(tmp_path) is None


def test_a_torn_index_line_is_ignored(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    session = Session.create(workspace)
    (index,) = AppPaths.from_env().index_dir.iterdir()
    with index.open("a") as file:
        file.write('{"session_id": "2026')

    assert Session.latest_for(workspace) == session


async def test_listing_shows_title_turns_and_most_recent_first(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    first = Session.create(workspace, now=1_000.0)
    second = Session.create(workspace, now=2_000.0)
    log = EventLog(first.events_path)
    await log.append(Prompt(prompt_id="p1", message=user_message("\n  Fix the parser\nplease")))
    await log.append(TurnBegin(turn_id=1, prompt_ids=("p1",)))
    await log.append(Prompt(prompt_id="p2", message=user_message("and the lexer")))
    await log.append(TurnBegin(turn_id=2, prompt_ids=("p2",)))
    await log.close()
    _touch(first, 9_000.0)
    _touch(second, 8_000.0)

    infos = list_sessions(workspace)

    assert [info.session_id for info in infos] == [first.session_id, second.session_id]
    assert (infos[0].title, infos[0].turns) == ("Fix the parser", 2)
    assert (infos[1].title, infos[1].turns) == ("", 0)
    assert Session.list_for(workspace) == infos


def _files_under(root: Path) -> list[Path]:
    return [path for path in root.rglob("*") if path.is_file()]


async def test_no_file_under_the_home_ever_holds_the_api_key(tmp_path: Path) -> None:
    key = "sk-test-FAKEKEY-0123456789abcdef"
    resolved = resolve(parse_config("", Path("config.toml")), environ={"OPENAI_API_KEY": key})
    session = Session.create(_workspace(tmp_path))
    log = EventLog(session.events_path)
    await log.append(
        SessionMeta(
            session_id=session.session_id,
            workspace=str(session.workspace),
            provider=resolved.provider_kind,
            model=resolved.model,
        )
    )
    await log.append(Prompt(prompt_id="p1", message=user_message(repr(resolved))))
    await log.close()

    files = _files_under(Path(os.environ["TUI_AGENT_HOME"]))
    assert session.events_path in files
    assert all(key.encode() not in path.read_bytes() for path in files)
