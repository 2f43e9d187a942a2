"""Record-or-replay: a simulation file (a "cassette") a test replays, or records when it has none.

``RecordMode`` says when a cassette is recorded (the modes of pytest-recording): ``none`` never (a
missing file is an error), ``new`` when the file does not exist yet, ``all`` every time. Replaying
puts the file through the admin API's import, so a file simproxy refuses is reported with the
server's reason (the JSON path of the first wrong field). Recording puts simproxy in capture mode;
``save`` writes the exported simulation next to its final name and renames it into place, so a
cassette is never half written.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from simproxy.admin.kit.client import ApiError, Client
from simproxy.admin.kit.harness import HarnessError


class RecordMode(StrEnum):
    NONE = "none"
    NEW = "new"
    ALL = "all"


class CassetteError(HarnessError):
    """A cassette that cannot be used: missing where recording is off, not JSON, refused, or one
    another test of the session records."""


@dataclass(frozen=True, slots=True)
class Cassette:
    """A simulation file; ``shown`` is how messages name it (relative to the project, as a rule)."""

    path: Path
    shown: str

    def records(self, mode: RecordMode) -> bool:
        """Whether this test records the cassette (else it replays it)."""
        if mode is RecordMode.ALL:
            return True
        if self.path.is_file():
            return False
        if mode is RecordMode.NONE:
            raise CassetteError(
                f"{self.shown}: no such simulation file, and --simproxy-record=none does not record one "
                "(run the test once with --simproxy-record=new to record it)"
            )
        return True

    def load(self) -> dict[str, Any]:
        """The simulation document the file holds."""
        try:
            doc = json.loads(self.path.read_bytes())
        except OSError as error:
            raise CassetteError(f"{self.shown}: cannot be read: {error.strerror or error}") from None
        except UnicodeDecodeError as error:
            raise CassetteError(f"{self.shown}: not a simulation: not UTF-8 text ({error.reason})") from None
        except json.JSONDecodeError as error:
            where = f"line {error.lineno}, column {error.colno}"
            raise CassetteError(f"{self.shown}: not a simulation: invalid JSON at {where}: {error.msg}") from None
        if not isinstance(doc, dict):
            raise CassetteError(f"{self.shown}: not a simulation: a JSON object is expected, not {type(doc).__name__}")
        return doc

    def replay(self, client: Client) -> None:
        """Import the file (the simulation is replaced)."""
        doc = self.load()
        try:
            client.put_simulation(doc)
        except ApiError as error:
            refused = f"the server refused it ({error.status}): {error.message}"
            raise CassetteError(f"{self.shown}: not a simulation: {refused}") from None

    def save(self, document: Any) -> None:
        """Write ``document`` (an exported simulation) all at once: parent folders are created, a
        temporary file in the same folder is written and renamed over the cassette."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
        fd, temporary = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                # mkstemp makes it 0600: a cassette is a file to commit, like its neighbours
                os.fchmod(out.fileno(), self.path.stat().st_mode & 0o777 if self.path.exists() else 0o644)
                out.write(text)
                out.flush()
                os.fsync(out.fileno())
            os.replace(temporary, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
