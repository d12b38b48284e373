"""The README's speed summary quotes bench/README.md's table of current figures: each figure it gives is there."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FIGURE = re.compile(r"\d[\d,.]*(?:–\d[\d,.]*)?(?: ?(?:ms|MB|×))?")


def _section(text: str, title: str) -> str:
    return text.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]


def figures(text: str) -> set[str]:
    """Numbers with their unit, spaces before × dropped: "1.10×", "14–40 ms", "13,266"."""
    return {figure.replace(" ×", "×") for figure in FIGURE.findall(text)} - {"2", "1,024", "100,000"}


def test_the_readme_speed_figures_are_the_bench_readmes_current_ones():
    readme = _section((REPO / "README.md").read_text(encoding="utf-8"), "Speed")
    bench = (REPO / "bench" / "README.md").read_text(encoding="utf-8")
    table = "\n".join(line for line in bench.splitlines() if line.startswith("| `"))  # the summary table
    quoted = figures(readme.replace("a million", ""))
    assert len(quoted) >= 8, quoted
    missing = {figure for figure in quoted if figure not in figures(table)}
    assert not missing, f"the README's Speed section gives figures bench/README.md's table does not: {missing}"
