"""No import cycles anywhere in `tui`, the UI included (issue 22): every import of one module by another, at any
depth (function-level and TYPE_CHECKING imports too: grimp sees them all), goes one way only."""

from __future__ import annotations

import grimp


def module_cycles(package: str) -> list[tuple[str, ...]]:
    """For each direct import A -> B inside `package` where B leads back to A: the cycle, A first."""
    graph = grimp.build_graph(package, cache_dir=None)
    cycles: list[tuple[str, ...]] = []
    for importer in sorted(graph.modules):
        for imported in sorted(graph.find_modules_directly_imported_by(importer)):
            back = graph.find_shortest_chain(importer=imported, imported=importer)
            if back is not None:
                cycles.append((importer, *back))
    return cycles


def test_no_import_cycles_in_tui() -> None:
    cycles = module_cycles("tui")
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(cycle) for cycle in cycles)


def test_the_check_sees_a_cycle(tmp_path, monkeypatch) -> None:
    """The check itself: two modules importing each other (one inside a function, as the UI's lazy imports do)."""
    package = tmp_path / "cyclic_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from cyclic_pkg import b\n")
    (package / "b.py").write_text("def later():\n    from cyclic_pkg import a\n")
    (package / "c.py").write_text("from cyclic_pkg import b\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert module_cycles("cyclic_pkg") == [
        ("cyclic_pkg.a", "cyclic_pkg.b", "cyclic_pkg.a"),
        ("cyclic_pkg.b", "cyclic_pkg.a", "cyclic_pkg.b"),
    ]
