"""The top-level API exports what it lists, lazily."""
import subprocess
import sys

import exampp


def test_every_export_resolves():
    for name in exampp.__all__:
        assert getattr(exampp, name) is not None, name


def test_import_is_light():
    # the CLI imports exampp first: pandas/scipy/ir_measures must wait until a command needs them
    code = "import sys, exampp, exampp.cli; print(sorted(m for m in ('pandas', 'scipy', 'ir_measures') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_every_exported_name_resolves():
    """Each name `import exampp` offers lazily is there, under its own name in the package."""
    import exampp

    for name in dir(exampp):
        if not name.startswith("_"):
            assert getattr(exampp, name) is not None, name
    assert exampp.restore_bank is __import__("exampp.api.bank_history", fromlist=["restore"]).restore
