"""Script texts (middleware, post-serve actions) written to files a worker can run, once per text."""

from __future__ import annotations

import hashlib
import os
import tempfile


class ScriptFiles:
    """One private folder per worker, removed on ``close``; a file per distinct script text."""

    def __init__(self, prefix: str) -> None:
        self._prefix = prefix
        self._paths: dict[str, str] = {}
        self._folder: tempfile.TemporaryDirectory[str] | None = None

    def path(self, script: str) -> str:
        digest = hashlib.sha256(script.encode()).hexdigest()
        path = self._paths.get(digest)
        if path is None:
            if self._folder is None:
                self._folder = tempfile.TemporaryDirectory(prefix=self._prefix)
            path = os.path.join(self._folder.name, f"script_{digest[:16]}")
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(script)
            self._paths[digest] = path
        return path

    def close(self) -> None:
        if self._folder is not None:
            self._folder.cleanup()
            self._folder = None
        self._paths.clear()
