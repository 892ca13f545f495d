"""What a person trusted in a workspace, kept between runs.

Things that come with a repository (its `.mcp.json` servers, its permission rules) act only once
the person trusts them. Each is remembered as a fingerprint of what makes it what it is, per
workspace, in a JSON file under `$TUI_AGENT_HOME`: a changed server or rule has a new
fingerprint, so the person is asked again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from tui_agent.lazy_dataclass import dataclass
from tui_agent.session._paths import AppPaths

Item = TypeVar("Item")


def fingerprint(*parts: str) -> str:
    text = json.dumps(list(parts))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


class TrustFile:
    """The fingerprints trusted in one workspace, in a file shared by every workspace."""

    def __init__(self, file: Path, workspace: Path) -> None:
        self._file = file
        self._workspace = str(workspace)

    def known(self) -> set[str]:
        return set(self._read().get(self._workspace, []))

    def add(self, fingerprints: Iterable[str]) -> None:
        data = self._read()
        known = data.setdefault(self._workspace, [])
        known.extend(f for f in fingerprints if f not in known)
        self._file.parent.mkdir(parents=True, exist_ok=True)
        partial = self._file.with_suffix(".tmp")
        partial.write_text(json.dumps(data, indent=1), encoding="utf-8")
        partial.replace(self._file)

    def _read(self) -> dict[str, list[str]]:
        try:
            data: Any = json.loads(self._file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}  # missing or damaged: nothing trusted yet, the person is asked again
        return data if isinstance(data, dict) else {}


@dataclass(frozen=True)
class TrustLine:
    """One thing a repository brings, as the trust prompt lists it."""

    kind: str  # "server", "hook", "skill", "allow rule"
    name: str
    detail: str  # what runs or what it is: a command line, a description; never a secret value


class RepositoryItems(Protocol):
    """One kind of thing a repository brings that acts only once the person trusts it."""

    def pending(self) -> list[TrustLine]:
        """The items not trusted yet (none under `--yolo`)."""
        ...

    def trust(self) -> None:
        """Remember every pending item as trusted in this workspace."""
        ...


class FingerprintTrust(Generic[Item]):
    """A `RepositoryItems` source whose items are trusted one by one, by fingerprint, in a file
    of its own under the data folder (`trust_all`: `--yolo`). A kind says which of its items
    are the repository's (`_found`), what makes one what it is (`_fingerprint`) and how the
    prompt lists it (`_line`)."""

    FILE: ClassVar[str]

    def __init__(
        self,
        workspace: Path,
        *,
        trust_all: bool = False,
        file: Path | None = None,
        paths: AppPaths | None = None,
    ) -> None:
        self._workspace = workspace
        self._all = trust_all
        self._paths = paths
        self._trusted = TrustFile(file or AppPaths.from_env().data_dir / self.FILE, workspace)

    def trusted(self, item: Item) -> bool:
        return self._all or self._fingerprint(item) in self._trusted.known()

    def pending(self) -> list[TrustLine]:
        return [self._line(item) for item in self._pending()]

    def trust(self) -> None:
        self._trusted.add(self._fingerprint(item) for item in self._pending())

    def _pending(self) -> Sequence[Item]:
        raise NotImplementedError

    def _fingerprint(self, item: Item) -> str:
        raise NotImplementedError

    def _line(self, item: Item) -> TrustLine:
        raise NotImplementedError
