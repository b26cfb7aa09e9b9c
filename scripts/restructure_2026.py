"""Issue 35's folders that show the layers: moves exampp's modules to where their layer is and rewrites
every reference to them. Idempotent, so that it can run again after other branches are merged:

    python scripts/restructure_2026.py && ruff check --fix --select I .

What it does, from the repository root:

1. ``git mv`` each file of :data:`MOVES` whose old path is still there (a move already made is skipped);
2. in every tracked or new, not ignored, Python, Markdown, TOML and YAML file, rewrites
   ``from exampp.x import ...`` statements (anywhere, at any indentation; in strings and pages, those of
   one line), ``import exampp.x``, dotted
   names (``exampp.x.y.name`` in strings such as mock.patch targets, ``:mod:`` and ``::: exampp.x``
   references, import-linter contracts), the lazy exports of ``exampp/__init__.py``
   (``"name": "exampp.x"``) and file paths (``exampp/x/y.py``).

A name is looked up where it now lives: a module of :data:`MOVES` has a new dotted path; a module of
:data:`SPLITS` kept its record types and gave its file format to another module (a name the other module
defines and the old one does not moved there); a name a moved module only imports (a re-export) is taken
from the module that defines it (:data:`RE_EXPORTS` names those of the re-exports now gone). Import
statements are regrouped one per module: ``ruff check --fix --select I`` orders them afterwards.
"""
from __future__ import annotations

import ast
import re
import subprocess
import sys
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# (old path, new path), relative to the repository root
MOVES = [
    # the file formats, one module per format family, out of the collection
    *((f"exampp/collection/{name}.py", f"exampp/formats/{name}.py") for name in (
        "assessment_sample", "choice_bank", "citations", "irds", "leaderboard", "nugget_assignments", "nugget_bank",
        "question_bank", "rag_responses", "reference_bank", "reference_grades", "response_matrix", "systems",
        "tqa_bank", "tsv_bank")),
    ("exampp/config.py", "exampp/formats/exampp_toml.py"),
    # what every layer uses to read and write files
    ("exampp/collection/io.py", "exampp/files/io.py"),
    ("exampp/collection/temps.py", "exampp/files/temps.py"),
    # the SQLite stores and the workspace that holds them
    ("exampp/store.py", "exampp/stores/grade_store.py"),
    ("exampp/batch_journal.py", "exampp/stores/batch_journal.py"),
    ("exampp/assessments.py", "exampp/stores/assessments.py"),
    ("exampp/collection/bank_history.py", "exampp/stores/bank_versions.py"),
    ("exampp/sqlite_file.py", "exampp/stores/sqlite_file.py"),
    ("exampp/workspace.py", "exampp/stores/layout.py"),
    # a grade is a record, as a run or a question is
    ("exampp/grades.py", "exampp/collection/grades.py"),
    # names that said less than the modules above them, with which they were confused
    ("exampp/settings.py", "exampp/setting_rules.py"),
    ("exampp/report/bank_review.py", "exampp/report/bank_review_page.py"),
    ("exampp/analysis/nuggets.py", "exampp/analysis/nugget_scores.py"),
    ("exampp/analysis/support.py", "exampp/analysis/support_scores.py"),
    ("exampp/analysis/agreement.py", "exampp/analysis/label_agreement.py"),
    ("exampp/generation/questions.py", "exampp/generation/question_requests.py"),
    ("exampp/generation/prompts.py", "exampp/generation/bank_prompts.py"),
    ("exampp/generation/parsing.py", "exampp/generation/answer_parsing.py"),
    ("exampp/grading/prompts.py", "exampp/grading/method_prompts.py"),
    ("exampp/grading/parsing.py", "exampp/grading/rating_parsing.py"),
]

# old module, which keeps the record types -> the module that took the file format from it
SPLITS = {
    "exampp.collection.runs": "exampp.formats.trec_run",
    "exampp.collection.qrels": "exampp.formats.trec_qrels",
    "exampp.collection.topics": "exampp.formats.topic_files",
    "exampp.collection.corpus": "exampp.formats.corpus_sources",
    "exampp.collection.questions": "exampp.formats.exampp_bank",
}

# old module -> the module whose names it only re-exported, and those names (the re-exports are gone)
RE_EXPORTS = {
    "exampp.collection.question_bank": ("exampp.collection.questions", {
        "BankFile", "Question", "QuestionBank", "exampp_question", "exampp_record", "question_id_for",
        "read_question_records"}),
}

SUFFIXES = {".py", ".md", ".toml", ".yml", ".yaml"}


def module_name(path: str) -> str:
    return path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")


MODULES = {module_name(old): module_name(new) for old, new in MOVES}
PATHS = dict(MOVES)


def module_path(module: str) -> Path | None:
    base = ROOT / module.replace(".", "/")
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


@cache
def top_level(module: str) -> tuple[frozenset[str], dict[str, str]]:
    """The names a module defines at its top level, and those it imports (name -> the module imported from)."""
    path = module_path(module)
    if path is None:
        return frozenset(), {}
    defined: set[str] = set()
    imported: dict[str, str] = {}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            defined |= {name.id for target in targets for name in ast.walk(target) if isinstance(name, ast.Name)}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            imported |= {alias.asname or alias.name: node.module for alias in node.names}
    return frozenset(defined), imported


def where(module: str, name: str) -> str:
    """The module that now holds ``name``, which was imported from ``module``."""
    source, names = RE_EXPORTS.get(module, (None, set()))
    if source is not None and name in names:
        return where(source, name)
    split = SPLITS.get(module)
    if split is not None and name in top_level(split)[0] and name not in top_level(module)[0]:
        module = split
    else:
        module = MODULES.get(module, module)
    defined, imported = top_level(module)
    source = imported.get(name)
    if name not in defined and source is not None and source.startswith("exampp.") and module_path(source):
        return where(source, name)  # a re-export: the module that defines it
    return module


def touched(module: str) -> bool:
    return module in MODULES or module in SPLITS or module in RE_EXPORTS


def rewrite_import(node: ast.ImportFrom, renamed: dict[str, str]) -> list[str] | None:
    """The statements that replace ``from MODULE import ...``, or None when it stays as it is; a module
    imported under its old name is imported under its new one, noted in ``renamed`` (old -> new)."""
    assert node.module is not None
    groups: dict[str, list[str]] = {}
    for alias in node.names:
        full = f"{node.module}.{alias.name}"
        if full in MODULES:  # from exampp.package import module
            parent, leaf = MODULES[full].rsplit(".", 1)
            if leaf != alias.name and alias.asname is None:
                renamed[alias.name] = leaf
            groups.setdefault(parent, []).append(leaf if alias.asname is None else f"{leaf} as {alias.asname}")
            continue
        target = where(node.module, alias.name) if touched(node.module) else node.module
        groups.setdefault(target, []).append(alias.name if alias.asname is None else f"{alias.name} as {alias.asname}")
    original = [alias.name if alias.asname is None else f"{alias.name} as {alias.asname}" for alias in node.names]
    if groups == {node.module: original}:
        return None
    return [f"from {module} import {', '.join(names)}" for module, names in groups.items()]


def rewrite_python(text: str) -> str:
    tree = ast.parse(text)
    lines = text.splitlines(keepends=True)
    edits = []  # (statement, replacement lines)
    renamed: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and node.module.startswith("exampp"):
            new = rewrite_import(node, renamed)
            if new is not None:
                edits.append((node, new))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in MODULES and alias.asname is None:
                    sys.exit(f"import {alias.name} without a name of its own: rewrite it by hand")
            new_names = [MODULES.get(a.name, a.name) + (f" as {a.asname}" if a.asname else "") for a in node.names]
            if [a.name for a in node.names] != [n.split(" as ")[0] for n in new_names]:
                edits.append((node, [f"import {', '.join(new_names)}"]))
    for node, new in sorted(edits, key=lambda edit: edit[0].lineno, reverse=True):
        first, last = node.lineno - 1, node.end_lineno - 1
        indent = lines[first][:node.col_offset]
        if indent.strip():
            sys.exit(f"an import after other code on line {node.lineno}: rewrite it by hand")
        tail = lines[last][node.end_col_offset:]
        between = f"  {tail.strip()}\n" if tail.strip() else "\n"  # a noqa holds for each statement made of it
        ends = [between] * (len(new) - 1) + [tail]
        lines[first:last + 1] = ["".join(indent + statement + end for statement, end in zip(new, ends))]
    text = "".join(lines)
    for old, new_name in renamed.items():  # the module's uses, module.name
        text = re.sub(rf"(?<![\w.]){old}\.(?=\w)", f"{new_name}.", text)
    return text


IMPORT_LINE = re.compile(r"^([ \t]*)(from exampp(?:\.\w+)+ import [\w ,]+?)[ \t]*$", re.MULTILINE)
DOTTED = re.compile(r"(?<![\w.])exampp(?:\.\w+)+")
EXPORT = re.compile(r'"(\w+)": "(exampp(?:\.\w+)+)(?::(\w+))?"')
PATH = re.compile(r"(?<![\w/])exampp/[\w/]+\.py\b")


def rewrite_dotted(match: re.Match) -> str:
    parts = match.group(0).split(".")
    for cut in range(len(parts), 1, -1):
        module = ".".join(parts[:cut])
        if touched(module):
            rest = parts[cut:]
            new = where(module, rest[0]) if rest else MODULES.get(module, module)
            return ".".join([new, *rest])
    return match.group(0)


def rewrite_import_line(match: re.Match) -> str:
    """An import written in a string or a page (code that a test or the docs run), one line long."""
    indent, statement = match.groups()
    node = ast.parse(statement).body[0]
    assert isinstance(node, ast.ImportFrom)
    renamed: dict[str, str] = {}
    new = rewrite_import(node, renamed)
    if renamed:
        sys.exit(f"{statement!r} imports a module under its old name: rewrite it by hand")
    return match.group(0) if new is None else "\n".join(indent + line for line in new)


def rewrite_export(match: re.Match) -> str:
    key, module, attribute = match.groups()
    if not touched(module):
        return match.group(0)
    return f'"{key}": "{where(module, attribute or key)}' + (f':{attribute}"' if attribute else '"')


def rewrite(path: Path) -> bool:
    text = path.read_text(encoding="utf-8")
    new = rewrite_python(text) if path.suffix == ".py" else text
    new = IMPORT_LINE.sub(rewrite_import_line, new)
    new = EXPORT.sub(rewrite_export, new)
    new = DOTTED.sub(rewrite_dotted, new)
    new = PATH.sub(lambda m: PATHS.get(m.group(0), m.group(0)), new)
    if new != text:
        path.write_text(new, encoding="utf-8")
    return new != text


def git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, check=True, capture_output=True, text=True).stdout


def move() -> None:
    for old, new in MOVES:
        if not (ROOT / old).exists():
            continue
        if (ROOT / new).exists():
            sys.exit(f"both {old} and {new} exist: merge them by hand")
        (ROOT / new).parent.mkdir(parents=True, exist_ok=True)
        git("mv", old, new)
        print(f"moved {old} -> {new}")


def main() -> None:
    move()
    top_level.cache_clear()
    this = Path(__file__).resolve()
    files = git("ls-files", "--cached", "--others", "--exclude-standard").splitlines()
    for name in sorted(set(files)):
        path = ROOT / name
        if path.suffix in SUFFIXES and path.is_file() and path.resolve() != this and rewrite(path):
            print(f"rewrote {name}")


if __name__ == "__main__":
    main()
