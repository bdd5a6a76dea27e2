"""A small TCP proxy for the tests: it passes bytes between a client and a server, and can be
told to break the way networks break (cut every request once an upload has passed, or swallow
the answer to an upload that the server did receive)."""

from __future__ import annotations

import socket
import threading

METHODS = (b"GET ", b"POST ", b"PUT ", b"PATCH ", b"DELETE ", b"HEAD ", b"OPTIONS ")
UPLOAD = b"POST /api/v2/uploads/upload"


class Proxy:
    def __init__(self, upstream_port: int):
        self.upstream = ("127.0.0.1", upstream_port)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.lock = threading.Lock()
        self.mode = "pass"          # pass | cut_after_upload | lose_upload_answer
        self.upload_passed = False  # an upload request went through (and, being answered, ended)
        self.cuts = 0               # connections cut
        self.requests: list[bytes] = []  # request lines seen
        self.open: set[socket.socket] = set()
        self.running = True
        threading.Thread(target=self._accept, daemon=True).start()

    def set_mode(self, mode: str) -> None:
        with self.lock:
            self.mode = mode
            self.upload_passed = False

    def close(self) -> None:
        self.running = False
        try:  # wakes the accept() under way: closing alone would leave the port listening
            self.listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.listener.close()
        with self.lock:
            for s in list(self.open):
                _shut(s)

    # -- plumbing ----------------------------------------------------------------------------------
    def _accept(self) -> None:
        while self.running:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(self.upstream)
            except OSError:
                _shut(client)
                continue
            state = {"lose_answer": False}
            with self.lock:
                self.open |= {client, server}
            threading.Thread(target=self._pump, args=(client, server, state, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client, state, False), daemon=True).start()

    def _cut(self, *sockets: socket.socket) -> None:
        with self.lock:
            self.cuts += 1
        for s in sockets:
            _shut(s)

    def _pump(self, source: socket.socket, target: socket.socket, state: dict, upward: bool) -> None:
        try:
            while True:
                chunk = source.recv(65536)
                if not chunk:
                    break
                if upward and chunk.startswith(METHODS):  # a new request on this connection
                    with self.lock:
                        self.requests.append(chunk.split(b"\r\n", 1)[0])
                        cut = self.mode == "cut_after_upload" and self.upload_passed
                        if chunk.startswith(UPLOAD):
                            self.upload_passed = True
                            state["lose_answer"] = self.mode == "lose_upload_answer"
                    if cut:
                        self._cut(source, target)
                        return
                if not upward and state["lose_answer"]:  # the server received it all and answers
                    self._cut(source, target)
                    return
                target.sendall(chunk)
        except OSError:
            pass
        finally:
            _shut(target)
            _shut(source)
            with self.lock:
                self.open -= {source, target}


def _shut(s: socket.socket) -> None:
    try:
        s.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    try:
        s.close()
    except OSError:
        pass
