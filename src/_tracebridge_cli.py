"""The ``tracebridge`` console script: ``tracebridge.cli.main``, with Ctrl-C covered from the
moment this module runs.

A top-level module on purpose: importing ``tracebridge.cli`` first imports the package (its
``__init__`` loads pydantic and the typed model, a good part of a second), and a Ctrl-C then
raises ``KeyboardInterrupt`` before ``main`` can catch it, which Python prints as a
traceback. Here it is one line, ``tracebridge: interrupted``, and exit 130, as everywhere else.
Nothing but ``sys`` is imported before the handling is in place.

``datetime`` is imported first, in Python: pydantic's compiled core imports it through a C
call, and a Ctrl-C that lands in that import is a Rust panic there (a ``PanicException``
and its traceback, exit 1), not a ``KeyboardInterrupt``. Already imported, it is only looked
up there, and a Ctrl-C is met in Python code, as anywhere else.
"""

import sys

EXIT_INTERRUPTED = 130


def main() -> int:
    """Import and run the command; returns its exit code."""
    try:
        import datetime  # noqa: F401 - see the module's docstring

        from tracebridge.cli import main as run

        return run()
    except KeyboardInterrupt:  # while importing, or before or after main's own handling
        if sys.stderr is not None:  # started with standard error closed: the code says it
            sys.stderr.write("tracebridge: interrupted\n")
        return EXIT_INTERRUPTED
