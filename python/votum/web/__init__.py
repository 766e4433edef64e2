"""The web pages of `votum serve` for voters, auditors and officials (spec/80.9): the elections, a
ballot tracker, the bulletin board (re-linked in the browser), the results, the verifier's report and
a read-only dashboard. Server-rendered (Jinja2) from the store; the texts are in `messages/`."""

from votum.web.pages import install
from votum.web.state import PageOptions

__all__ = ["PageOptions", "install"]
