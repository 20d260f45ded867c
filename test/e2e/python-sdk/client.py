"""The official MCP Python SDK (`mcp` on PyPI) as an MCP client of Portcullis, driven by
test/e2e/mcp-python-sdk.test.ts.

It connects to the MCP endpoint with the SDK's own OAuth provider: 401 -> protected resource and
authorization server discovery -> registration (dynamic, or its client metadata document URL when
one is given and the server supports them) -> PKCE authorization -> token -> tools/list ->
tools/call -> a refresh once the access token has expired -> tools/list again.

The browser part talks to the test over stdio, one JSON object per line: this script prints
{"authorize": "<url>"} and reads back the URL the authorization server redirected to, after the
test signed in and consented on the real pages. The last line it prints is {"result": {...}}.
"""

import argparse
import json
import sys
import time
from urllib.parse import parse_qs, urlparse

import anyio
import httpx2
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)


class MemoryStorage:
    """The SDK's TokenStorage, in memory; remembers every token set it was given."""

    def __init__(self) -> None:
        self.tokens: list[OAuthToken] = []
        self.client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens[-1] if self.tokens else None

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens.append(tokens)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


def say(message: dict) -> None:
    print(json.dumps(message), flush=True)


async def main(args: argparse.Namespace) -> None:
    storage = MemoryStorage()
    callbacks: list[AuthorizationCodeResult] = []
    authorization_urls: list[str] = []

    async def redirect_handler(url: str) -> None:
        authorization_urls.append(url)
        say({"authorize": url})
        line = await anyio.to_thread.run_sync(sys.stdin.readline)
        query = parse_qs(urlparse(line.strip()).query)
        if "code" not in query:
            raise RuntimeError(f"the authorization ended without a code: {line.strip()}")
        callbacks.append(
            AuthorizationCodeResult(
                code=query["code"][0],
                state=query.get("state", [None])[0],
                iss=query.get("iss", [None])[0],
            )
        )

    async def callback_handler() -> AuthorizationCodeResult:
        return callbacks.pop()

    provider = OAuthClientProvider(
        server_url=args.url,
        client_metadata=OAuthClientMetadata(
            client_name=args.client_name,
            redirect_uris=[args.redirect_uri],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        ),
        storage=storage,
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
        client_metadata_url=args.client_metadata_url,
    )

    async with httpx2.AsyncClient(auth=provider, timeout=30) as http:
        # "legacy": the initialize handshake of 2025-11-25, the revision the endpoint negotiates.
        async with Client(streamable_http_client(args.url, http_client=http), mode="legacy") as client:
            listed = await client.list_tools()
            called = await client.call_tool(args.tool, json.loads(args.tool_arguments))
            first_token = storage.tokens[-1].access_token
            # The access token's lifetime, as the SDK computed it from expires_in, has run out: what an hour of
            # use would bring about, without the wait. The next request must refresh first.
            provider.context.token_expiry_time = time.time() - 1
            relisted = await client.list_tools()
            protocol_version = client.protocol_version

    say(
        {
            "result": {
                "protocol_version": protocol_version,
                "client_id": storage.client_info.client_id if storage.client_info else None,
                "authorization_urls": authorization_urls,
                "tools": sorted(tool.name for tool in listed.tools),
                "tools_after_refresh": sorted(tool.name for tool in relisted.tools),
                "call_is_error": called.is_error,
                "call_text": "".join(getattr(part, "text", "") for part in called.content),
                "token_sets": len(storage.tokens),
                "refreshed": storage.tokens[-1].access_token != first_token,
                "scope": storage.tokens[-1].scope,
            }
        }
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True, help="the MCP endpoint")
    parser.add_argument("--redirect-uri", required=True)
    parser.add_argument("--client-name", default="MCP Python SDK")
    parser.add_argument("--client-metadata-url", default=None, help="a client metadata document URL (CIMD)")
    parser.add_argument("--tool", default="list-courses", help="the tool to call")
    parser.add_argument("--tool-arguments", default="{}", help="its arguments, a JSON object")
    anyio.run(main, parser.parse_args())
