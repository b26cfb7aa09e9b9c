"""A benchmark's server in a process of its own, as a real server is: its scheduler then keeps its
pace whatever the client's threads do.

``serve(pipe, *args)`` starts the server, sends its URL down ``pipe``, then answers each "ask" with
the server's figures until it reads "stop" (:func:`answer_until_stopped`); :class:`ServerProcess`
runs it and gives ``url`` and :meth:`ServerProcess.ask` while the block runs.
"""
from __future__ import annotations

import multiprocessing
from collections.abc import Callable
from multiprocessing.connection import Connection


class ServerProcess:
    """``serve(pipe, *args)`` in a spawned process: ``url`` and :meth:`ask` while the block runs.

    :param serve: the server's side, a function of a module (a spawned process imports it by name)
    :param args: what ``serve`` is given after the pipe
    """

    def __init__(self, serve: Callable[..., None], *args: object) -> None:
        context = multiprocessing.get_context("spawn")
        self._pipe, child = context.Pipe()
        self._process = context.Process(target=serve, args=(child, *args), daemon=True)

    def __enter__(self) -> "ServerProcess":
        self._process.start()
        self.url = self._pipe.recv()
        return self

    def __exit__(self, *exc: object) -> None:
        self._pipe.send("stop")
        self._process.join()

    def ask(self) -> object:
        """The server's figures now (what its ``serve`` answers)."""
        self._pipe.send("ask")
        return self._pipe.recv()


def answer_until_stopped(pipe: Connection, url: str, figures: Callable[[], object]) -> None:
    """The server side: send ``url``, then ``figures()`` for each ask, until told to stop.

    :param pipe: the child's end of :class:`ServerProcess`'s pipe
    :param url: the server's URL
    :param figures: the server's figures now
    """
    pipe.send(url)
    while pipe.recv() == "ask":
        pipe.send(figures())
