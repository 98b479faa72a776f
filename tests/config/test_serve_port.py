"""`make run` on a port something already listens on stops with one line naming PORT, before
it starts anything (config/serve.py)."""

import socket

from config import serve


def test_serve_refuses_a_port_in_use(monkeypatch, capsys):
    monkeypatch.setattr(serve, "grader_status", lambda environ: ("Grader: none", ""))
    started = []
    monkeypatch.setattr(serve.subprocess, "run", lambda *a, **k: started.append(a))
    monkeypatch.setattr(serve.Supervised, "start", lambda self: started.append(self.name))
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        monkeypatch.setenv("PORT", str(port))
        assert serve.main([]) == 1
    err = capsys.readouterr().err
    assert f"127.0.0.1:{port}" in err and "PORT" in err
    assert not started
