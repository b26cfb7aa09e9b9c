"""--device resolution (exampp.llm.device): what each wrong value is told, on a CPU build, on a CUDA
build without a GPU, and beyond the GPU count (torch's CUDA queries are stood in for)."""
from __future__ import annotations

import pytest

from exampp.llm.device import DeviceError, resolve_device

torch = pytest.importorskip("torch", reason="device resolution returns torch devices")


@pytest.fixture
def gpus(monkeypatch):
    """gpus(n, cuda_version): torch as if it were a CUDA build seeing n GPUs (cuda_version None: a CPU build)."""

    def pretend(n: int, cuda_version: str | None = "12.4") -> None:
        monkeypatch.setattr(torch.version, "cuda", cuda_version)
        monkeypatch.setattr(torch.cuda, "is_available", lambda: n > 0)
        monkeypatch.setattr(torch.cuda, "device_count", lambda: n)

    return pretend


@pytest.mark.parametrize("name", ["gpu", "GPU", "cuda:", "cuda:x", "cpu:0", "tpu", "", "auto:1"])
def test_unknown_names_list_the_valid_kinds(name):
    with pytest.raises(DeviceError) as error:
        resolve_device(name)
    assert str(error.value) == f"--device {name!r} is not a device: use auto, cpu, cuda or cuda:N"


@pytest.mark.parametrize("name", ["cuda", "cuda:0", "cuda:1"])
def test_cuda_on_a_cpu_build(gpus, name):
    gpus(0, cuda_version=None)
    with pytest.raises(DeviceError) as error:
        resolve_device(name)
    assert str(error.value) == f"--device {name!r}: this torch is a CPU-only build, without CUDA; use auto or cpu"


def test_cuda_build_without_a_gpu(gpus):
    gpus(0)
    with pytest.raises(DeviceError) as error:
        resolve_device("cuda")
    assert str(error.value) == "--device 'cuda': torch (CUDA 12.4) sees no CUDA GPU; use auto or cpu"


def test_cuda_index_beyond_the_device_count(gpus):
    gpus(2)
    with pytest.raises(DeviceError) as error:
        resolve_device("cuda:2")
    assert str(error.value) == "--device 'cuda:2': torch sees 2 CUDA GPUs; use auto, cpu, cuda, cuda:0 or cuda:1"
    assert resolve_device("cuda:1") == torch.device("cuda:1") and resolve_device("cuda") == torch.device("cuda")
    assert resolve_device("auto") == torch.device("cuda")


def test_cpu_and_auto_without_a_gpu(gpus):
    gpus(0)
    assert resolve_device("cpu") == torch.device("cpu") and resolve_device("auto") == torch.device("cpu")
