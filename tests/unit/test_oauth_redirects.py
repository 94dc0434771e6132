"""Trust round 3, item 5: OAuth client registration took `http://localhost:80@evil.example/cb` as a
loopback redirect (the check read `netloc.split(":")[0]`, the userinfo); the code would then go over
plain HTTP to evil.example, and the consent page named "localhost:80@evil.example"."""

from __future__ import annotations

import pytest
from mcp.server.auth.provider import RegistrationError
from mcp.shared.auth import OAuthClientInformationFull

from lore.http.oauth import _redirect_host, check_registration


def _client(uri: str) -> OAuthClientInformationFull:
    return OAuthClientInformationFull(client_id="c", client_name="agent", redirect_uris=[uri])  # type: ignore[list-item]


@pytest.mark.parametrize(
    "uri",
    [
        "http://localhost:80@evil.example/cb",
        "http://127.0.0.1@evil.example/cb",
        "http://localhost@evil.example:8443/cb",
        "http://user:pw@localhost/cb",
        "https://user@agent.example/cb",
        "http://[::1]@evil.example/cb",
        "http://localhost.evil.example/cb",
        "http://127.0.0.1.nip.io/cb",
    ],
)
def test_a_userinfo_or_a_look_alike_host_is_refused(uri: str) -> None:
    with pytest.raises(RegistrationError) as raised:
        check_registration(_client(uri))
    assert raised.value.error == "invalid_redirect_uri"


@pytest.mark.parametrize(
    "uri",
    ["http://localhost/cb", "http://127.0.0.1:33418/cb", "http://[::1]:9/cb", "https://agent.example/cb"],
)
def test_loopback_and_https_are_taken(uri: str) -> None:
    check_registration(_client(uri))


def test_the_consent_page_names_the_real_host() -> None:
    assert _redirect_host({"redirect_uri": "http://localhost:80@evil.example/cb"}) == "evil.example"
    assert _redirect_host({"redirect_uri": "http://[::1]:9/cb"}) == "[::1]:9"
    assert _redirect_host({"redirect_uri": "http://127.0.0.1:33418/cb"}) == "127.0.0.1:33418"
