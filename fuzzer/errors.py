"""The one exception every layer may raise for the user's mistakes (exit code 2).

It lives apart from the configuration so that low layers (external tools, the store)
can raise it without importing what imports them."""


class UsageError(Exception):
    """Bad usage or bad input: one line for the user, exit code 2."""
