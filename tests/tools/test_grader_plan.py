"""`make grader` on a machine without a GPU says, before it installs anything, what it is
about to do and what that can and cannot do: the CPU build, slow, the download sizes, and
GRADER_MODEL_PATH for a machine without network. No vLLM is installed or started here."""

import subprocess

import pytest

from tools.vllm import grader


@pytest.fixture
def no_setup(monkeypatch):
    """Run grader.main() up to the environment build, which 'fails' at once."""
    calls: list[list[str]] = []

    def fake_run(command, **kwargs):
        calls.append(list(command))
        return subprocess.CompletedProcess(command, 1)

    monkeypatch.setattr(grader, "gpu_memory_mib", lambda: None)
    monkeypatch.setattr(grader, "port_in_use", lambda port: False)
    monkeypatch.setattr(grader.subprocess, "run", fake_run)
    for name in ("GRADER_DEVICE", "GRADER_MODEL_PATH", "GRADER_PORT"):
        monkeypatch.delenv(name, raising=False)
    return calls


def test_without_a_gpu_it_says_what_the_cpu_build_can_and_cannot_do(no_setup, capsys):
    assert grader.main() == 1
    err = capsys.readouterr().err
    before_setup = err.split("building or reusing", 1)[0]
    assert "no CUDA device" in before_setup
    assert "CPU build" in before_setup
    assert "slow" in before_setup and "not for a cohort" in before_setup
    assert "GRADER_MODEL_PATH" in before_setup
    assert "self-check" in before_setup  # what candidates get meanwhile
    assert no_setup and no_setup[0][0] == "bash"  # said before the build started


def test_a_forced_cpu_says_it_was_asked_for(no_setup, capsys, monkeypatch):
    monkeypatch.setenv("GRADER_DEVICE", "cpu")
    grader.main()
    err = capsys.readouterr().err.split("building or reusing", 1)[0]
    assert "GRADER_DEVICE=cpu" in err and "CPU build" in err
