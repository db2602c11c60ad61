"""Dependencies of the builders: the caller's wallet, the node client and the chain facts they
cache.

Every builder needs a wallet credential (:data:`~predmarket.auth.deps.WalletDep`: a session, with
its CSRF token in cookie mode, or a legacy key whose ``write:tx`` scope the key policy checks),
and the transaction's signer must be that wallet (spec 5.2.7: no delegation): see
:func:`check_signer`.

The node client is the app's (``app.state.node``, made in the lifespan) when there is one;
otherwise a client of ``settings.node_url`` lives for the request. No node at all is a 502.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import Depends
from starlette.requests import Request

from predmarket.auth import wallets
from predmarket.auth.errors import SignerMismatch
from predmarket.auth.principal import Principal
from predmarket.kit.deps import get_settings
from predmarket.kit.errors import UpstreamError
from predmarket.node import NodeClient, RetryPolicy
from predmarket.tx.service import ChainCache


def check_signer(principal: Principal, signer_address: str) -> None:
    """403 ``SIGNER_MISMATCH`` unless ``signer_address`` is the authenticated wallet (compared by
    lockup script: a groupless ``3…`` with or without ``:N`` is one wallet)."""
    if principal.wallet is None or not wallets.same_wallet(signer_address, principal.wallet):
        raise SignerMismatch(details={"field": "body.signerAddress"})


async def get_node(request: Request) -> AsyncIterator[NodeClient]:
    shared = getattr(request.app.state, "node", None)
    if isinstance(shared, NodeClient):
        yield shared
        return
    settings = get_settings(request)
    if settings.node_url is None:
        raise UpstreamError("no chain node is configured")
    async with NodeClient(
        settings.node_url,
        timeout_s=settings.node.timeout_seconds,
        retry=RetryPolicy(attempts=settings.node.retries + 1),
    ) as node:
        yield node


def get_chain_cache(request: Request) -> ChainCache:
    """Facts of the chain that never change (network id, groups, a registry's collateral), kept
    for the life of the process: a cache of the node, never the only copy of anything."""
    cache = getattr(request.app.state, "tx_chain_cache", None)
    if not isinstance(cache, ChainCache):
        cache = ChainCache()
        request.app.state.tx_chain_cache = cache
    return cache


NodeDep = Annotated[NodeClient, Depends(get_node)]
ChainCacheDep = Annotated[ChainCache, Depends(get_chain_cache)]
