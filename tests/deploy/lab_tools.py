"""Helpers the python checks of deploy/ share: whether CI requires a tool, a free loopback port."""
import os
import socket


def required(need):
    """Whether FW_REQUIRE names `need` (or all): then a missing tool fails instead of skipping."""
    listed = os.environ.get("FW_REQUIRE", "").split(",")
    return need in listed or "all" in listed


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
