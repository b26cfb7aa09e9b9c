"""Draw docs/explanation/layers.svg, the architecture page's picture of exampp's layers, from the layers
contract in pyproject.toml: one box per layer, top to bottom, its modules joined by " · " and a caption
below them. tests/test_docs_site.py checks that the committed picture is what this draws.

    python scripts/draw_layers.py    # rewrites docs/explanation/layers.svg
"""
from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PICTURE = ROOT / "docs" / "explanation" / "layers.svg"
# What each layer holds, in a few words, by its first module; a layer without one is an error.
CAPTIONS = {
    "testing": "the tests' and benchmarks' servers and tiny models",
    "__main__": "python -m exampp",
    "cli": "parses flags, prints",
    "api": "the jobs: one spec and run() per command",
    "report": "the parts the jobs are made of",
    "scoring": "scores, labels, measures; the pool",
    "formats": "file formats (exampp.toml too), model backends, the workspace and its SQLite stores",
    "collection": "what a collection is, as data: runs, qrels, topics, questions, passages, grades",
    "errors": "what every layer may use",
}
WIDTH, HEIGHT, STEP = 800, 46, 68  # a box's height, and from one box's top to the next's


def layers(pyproject: Path = ROOT / "pyproject.toml") -> list[list[str]]:
    """The modules of each layer of the ``layers`` contract, top to bottom."""
    contracts = tomllib.loads(pyproject.read_text(encoding="utf-8"))["tool"]["importlinter"]["contracts"]
    contract = next(c for c in contracts if c["id"] == "layers")
    return [[module.strip() for module in layer.split(":")] for layer in contract["layers"]]


def draw(drawn: list[list[str]]) -> str:
    """The SVG of ``drawn``'s layers."""
    height = 5 + STEP * (len(drawn) - 1) + HEIGHT + 5
    lines = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" '
        'font-family="sans-serif" role="img">',
        "<title>The layers of exampp: each imports only from its own layer and those below</title>",
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="5" refY="9" markerWidth="7" markerHeight="7" '
        'orient="auto-start-reverse"><path d="M0,0 L10,0 L5,10 z" fill="#555"/></marker></defs>',
    ]
    middle = WIDTH / 2
    for index, modules in enumerate(drawn):
        top = 5 + STEP * index
        if index:
            lines.append(f'<line x1="{middle}" y1="{top - STEP + HEIGHT}" x2="{middle}" y2="{top - 3}" '
                         'stroke="#555" stroke-width="1.5" marker-end="url(#arrow)"/>')
        lines += [
            f'<rect x="20" y="{top}" width="{WIDTH - 40}" height="{HEIGHT}" rx="6" fill="#e8eaf6" stroke="#3f51b5"/>',
            f'<text class="layer" x="{middle}" y="{top + 20}" text-anchor="middle" font-size="15" '
            f'font-weight="bold" fill="#1a237e">{" · ".join(modules)}</text>',
            f'<text x="{middle}" y="{top + 38}" text-anchor="middle" font-size="12" fill="#444">'
            f"{CAPTIONS[modules[0]]}</text>",
        ]
    return "\n".join([*lines, "</svg>", ""])


if __name__ == "__main__":
    PICTURE.write_text(draw(layers()), encoding="utf-8")
