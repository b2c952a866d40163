"""A package to put in a wheel."""


def greet(name):
    return f"hello, {name}"
