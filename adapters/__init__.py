"""Adapters between agent frameworks' traces and tracebridge's typed messages.

Installed as ``tracebridge.adapters``; one package per framework, each with ``to_messages``,
``from_messages`` and ``detect``. Framework packages are imported inside each adapter.
"""
