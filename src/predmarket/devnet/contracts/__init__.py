"""The protocol's contracts, implemented natively (their ABI is :mod:`predmarket.devnet.abi`)."""
