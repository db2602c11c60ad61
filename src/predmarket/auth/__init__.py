"""Authentication: wallet challenges and sessions, legacy API keys, developer keys (spec part 5).

Who is calling is resolved once per request into a :class:`~predmarket.auth.principal.Principal`
(``request.state.principal``); routes state what they need with the dependencies of
:mod:`predmarket.auth.deps`. See docs/auth.md.
"""
