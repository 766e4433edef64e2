"""What the pages hold on their app, typed (issue 46): the options the service gives them and the two
verifiers run on demand; set by `pages.install`, read through `web_state(request)`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from votum.asgi import app_state
from votum.web.eg2_records import BallotIndexes
from votum.web.verification import Verifications


@dataclass(frozen=True)
class PageOptions:
    """The service's settings the pages read (the pages do not import the service)."""

    data_dir: Path
    verification_interval: float
    mix_records: Path | None
    eg2_records: Path | None
    api_docs: bool


@dataclass
class WebState:
    options: PageOptions
    verifications: Verifications
    mix_verifications: Verifications
    eg2_verifications: Verifications
    eg2_indexes: BallotIndexes


def web_state(holder: Any) -> WebState:
    """The pages' state of the app serving a request (or of an app)."""
    return app_state(holder, "web", WebState, "the pages are not installed on this app")
