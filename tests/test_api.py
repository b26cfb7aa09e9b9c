"""The top-level API exports what it lists, lazily."""
import subprocess
import sys

import exampp


def test_every_export_resolves():
    for name in exampp.__all__:
        assert getattr(exampp, name) is not None, name


def test_the_type_checkers_imports_are_the_lazy_exports():
    # the `if TYPE_CHECKING:` block of exampp/__init__.py names exactly what __getattr__ hands out,
    # each from the same module (as the same attribute), so that a type checker sees the real API
    import ast

    tree = ast.parse(open(exampp.__file__).read())
    block = next(node for node in tree.body
                 if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING")
    seen = {}
    for node in block.body:
        assert isinstance(node, ast.ImportFrom)
        for alias in node.names:
            target = (node.module if alias.asname is None or alias.asname == alias.name
                      else f"{node.module}:{alias.name}")
            seen[alias.asname or alias.name] = target
    assert seen == exampp._EXPORTS


def test_import_is_light():
    # the CLI imports exampp first: pandas/scipy/ir_measures must wait until a command needs them
    code = ("import sys, exampp, exampp.cli; "
            "print(sorted(m for m in ('pandas', 'scipy', 'ir_measures') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_every_exported_name_resolves():
    """Each name `import exampp` offers lazily is there, under its own name in the package."""
    import exampp

    for name in dir(exampp):
        if not name.startswith("_"):
            assert getattr(exampp, name) is not None, name
    assert exampp.restore_bank is __import__("exampp.api.bank_history", fromlist=["restore"]).restore
