"""No import cycle in bench/vmharness (issue 50): the graph of which
module imports which, read from the source (ast), every import counted,
those inside functions too (a cycle hidden in a function is a cycle all
the same: the two modules cannot be understood, or split, one without
the other)."""
import ast
import os

HARNESS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench",
                       "vmharness")


def import_graph(pkg_dir, pkg="vmharness"):
    """{module: set of the package's modules it imports}."""
    mods = {f[:-3] for f in os.listdir(pkg_dir) if f.endswith(".py")}
    graph = {}
    for m in mods:
        with open(os.path.join(pkg_dir, m + ".py")) as f:
            tree = ast.parse(f.read(), m + ".py")
        deps = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                if node.level == 1 or (node.level == 0 and node.module
                                       and node.module.split(".")[0] == pkg):
                    # from . import a, b / from .a import x / from vmharness.a import x
                    path = (node.module or "").split(".")
                    if node.level == 0:
                        path = path[1:]
                    if path and path[0]:
                        deps.add(path[0])
                    else:
                        deps |= {a.name for a in node.names}
            elif isinstance(node, ast.Import):
                for a in node.names:  # import vmharness.a
                    parts = a.name.split(".")
                    if parts[0] == pkg and len(parts) > 1:
                        deps.add(parts[1])
        graph[m] = (deps & mods) - {m}
    return graph


def cycles(graph):
    """Every cycle of GRAPH found by a depth-first search: [[a, b, ..., a]]."""
    found, state, stack = [], {}, []

    def visit(m):
        state[m] = "open"
        stack.append(m)
        for d in sorted(graph[m]):
            if state.get(d) == "open":
                found.append(stack[stack.index(d):] + [d])
            elif d not in state:
                visit(d)
        stack.pop()
        state[m] = "done"
    for m in sorted(graph):
        if m not in state:
            visit(m)
    return found


def test_the_graph_is_read_from_the_source(tmp_path):
    for name, text in (("a", "from . import b\n"), ("b", "def f():\n    from .c import x\n"),
                       ("c", "import vmharness.a\n"), ("d", "from vmharness.b import f\n")):
        (tmp_path / (name + ".py")).write_text(text)
    g = import_graph(str(tmp_path))
    assert g == {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"b"}}
    assert cycles(g) == [["a", "b", "c", "a"]]
    assert cycles(dict(g, c=set())) == []


def test_no_import_cycle_in_the_harness():
    g = import_graph(HARNESS)
    assert "cli" in g and "scenarios" in g["cli"] and "sweep" in g["scenarios"]
    assert cycles(g) == [], "import cycles: " + "; ".join(" -> ".join(c) for c in cycles(g))
