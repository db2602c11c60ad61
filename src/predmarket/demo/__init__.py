"""Demo markets for a fresh ``predmarket serve``: created and traded through real devnet
transactions (:mod:`predmarket.demo.seed`), from the list in :mod:`predmarket.demo.catalog`."""
