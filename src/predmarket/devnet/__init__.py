"""The embedded devnet: an Alephium-compatible node running the protocol's contracts natively.

Start with :class:`~predmarket.devnet.node.DevnetNode`; the contracts' ABI is
:mod:`predmarket.devnet.abi` (``docs/chain-abi.md``).
"""

from predmarket.devnet.abi import abi_document
from predmarket.devnet.errors import NodeError
from predmarket.devnet.genesis import DevnetConfig
from predmarket.devnet.node import Destination, DevnetNode

__all__ = ["Destination", "DevnetConfig", "DevnetNode", "NodeError", "abi_document"]
