"""Where models load from (exampp.llm.locate): local folders never reach the hub; a hub id loads from
the local cache at once when the hub is out of reach. No test here reaches beyond loopback."""
from __future__ import annotations

import socket
import time

import pytest

from conftest import CLOSED_PORT, cache_model
from exampp.errors import ModelLoadError
from exampp.llm.locate import LLM_REMEDY, ModelSource, locate_model, looks_like_path

UNCACHED = ("model 'google/flan-t5-large' is not in the local HuggingFace cache and the hub "
            f"({CLOSED_PORT}) cannot be reached. {LLM_REMEDY}")


@pytest.fixture
def listening():
    """A loopback port that accepts connections (a hub, or a proxy, that answers)."""
    server = socket.create_server(("127.0.0.1", 0))
    yield f"http://127.0.0.1:{server.getsockname()[1]}"
    server.close()


@pytest.mark.parametrize("spec, path", [
    ("/abs/model", True), ("./model", True), ("../model", True), ("~/model", True), (".", True),
    ("google/flan-t5-large", False), ("gpt2", False),
])
def test_what_looks_like_a_path(spec, path):
    assert looks_like_path(spec) is path


def test_an_existing_relative_folder_is_a_path(tmp_path, monkeypatch):
    (tmp_path / "google" / "flan-t5-large").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    assert looks_like_path("google/flan-t5-large")


def test_missing_folder_is_named_with_home_expanded(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    with pytest.raises(ModelLoadError) as error:
        locate_model("~/models/nope")
    assert str(error.value) == f"no such model folder {tmp_path}/models/nope"
    with pytest.raises(ModelLoadError) as error:
        locate_model("./nope")
    assert str(error.value) == "no such model folder ./nope"


def test_a_file_or_a_folder_without_config_is_not_a_model_folder(tmp_path):
    (tmp_path / "weights.bin").write_bytes(b"")
    with pytest.raises(ModelLoadError) as error:
        locate_model(str(tmp_path / "weights.bin"))
    assert str(error.value) == f"{tmp_path}/weights.bin is not a model folder: it is a file. {LLM_REMEDY}"
    with pytest.raises(ModelLoadError) as error:
        locate_model(str(tmp_path))
    assert str(error.value) == f"{tmp_path} is not a model folder: it has no config.json. {LLM_REMEDY}"


def test_a_local_folder_never_probes_the_hub(tmp_path, monkeypatch):
    (tmp_path / "config.json").write_text("{}")
    monkeypatch.setenv("HOME", str(tmp_path.parent))
    monkeypatch.setattr(socket, "create_connection", pytest.fail)
    assert locate_model(f"~/{tmp_path.name}") == ModelSource(str(tmp_path), True)


def test_uncached_model_fails_at_once_when_the_hub_is_closed(unreachable_hub):
    start = time.perf_counter()
    with pytest.raises(ModelLoadError) as error:
        locate_model("google/flan-t5-large")
    assert time.perf_counter() - start < 1.0
    assert str(error.value) == UNCACHED


def test_offline_variable_skips_the_probe(unreachable_hub, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(socket, "create_connection", pytest.fail)
    with pytest.raises(ModelLoadError, match="'org/model' is not in the local HuggingFace cache and "
                                             "HF_HUB_OFFLINE is set"):
        locate_model("org/model")


def test_cached_model_is_read_from_the_cache_when_the_hub_is_closed(unreachable_hub, tmp_path):
    (tmp_path / "files").mkdir()
    (tmp_path / "files" / "config.json").write_text("{}")
    cache_model(unreachable_hub, "org/model", tmp_path / "files")
    assert locate_model("org/model") == ModelSource("org/model", True)


def test_a_hub_that_answers_is_used(unreachable_hub, monkeypatch, listening):
    monkeypatch.setenv("HF_ENDPOINT", listening)
    assert locate_model("org/model") == ModelSource("org/model", False)


def test_the_probe_goes_to_the_proxy_when_one_applies(unreachable_hub, monkeypatch, listening):
    monkeypatch.setenv("HF_ENDPOINT", "https://hub.invalid")  # reached only through the proxy
    monkeypatch.setenv("https_proxy", listening)
    assert locate_model("org/model").local_files_only is False
    monkeypatch.setenv("no_proxy", "hub.invalid")  # bypassed: the hub itself is probed, and out of reach
    with pytest.raises(ModelLoadError, match=r"the hub \(https://hub.invalid\) cannot be reached"):
        locate_model("org/model")


def test_a_malformed_hub_id_is_not_cached(unreachable_hub):
    with pytest.raises(ModelLoadError, match="model 'a b/c' is not in the local HuggingFace cache"):
        locate_model("a b/c")


def test_loading_errors_become_one_message():
    source = ModelSource("org/model", True, kind="reader", remedy="Do this.")
    with pytest.raises(ModelLoadError) as error, source.loading():
        raise OSError("no file named model.safetensors\nsecond line")
    assert str(error.value) == "cannot load reader 'org/model': no file named model.safetensors. Do this."


def test_loading_a_model_silences_the_loaders_own_bars():
    """transformers' "Loading weights" bar fills pipes and logs and cuts through exampp's own bar."""
    hf_logging = pytest.importorskip("transformers.utils.logging")
    hf_logging.enable_progress_bar()
    with ModelSource("some/model", True).loading():
        pass
    assert not hf_logging.is_progress_bar_enabled()
