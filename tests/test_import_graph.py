"""The import graph of srcgrad/ is a tree a newcomer can draw (issue 28, point 2): no module
imports, at its top or inside a function, a module that imports it back. Tables are filled by
rule files that import only the table (ad/tables.py, ir/primitive_table.py) and gathered by one
module that imports them all (ad/all_rules.py, ir/primitives.py, frontend/call_table.py,
frontend/lower.py's dispatch tables), never by imports at the bottom of a module.

The circles not broken yet are listed in KNOWN_CIRCLES, each with what breaking it takes: a new
circle fails this test, and so does a listed one that is gone (take it off the list)."""
import ast
import os
from collections import defaultdict

import srcgrad

ROOT = os.path.dirname(srcgrad.__file__)

KNOWN_CIRCLES = set()      # every circle is broken (issue 28 point 2); a new one fails


def _modules():
    found = {}
    for folder, _, files in os.walk(ROOT):
        for f in files:
            if f.endswith(".py"):
                path = os.path.join(folder, f)
                name = os.path.relpath(path, ROOT)[:-3].replace(os.sep, ".")
                name = "" if name == "__init__" else name.removesuffix(".__init__")
                found[name] = path
    return found


def _target(module, is_package, node):
    """The module an ``import`` or ``from ... import`` names, relative to srcgrad ('' itself)."""
    if node.level == 0:
        base = (node.module or "").split(".")
        if base[0] != "srcgrad":
            return None
        return ".".join(base[1:])
    parts = module.split(".") if module else []
    if not is_package:
        parts = parts[:-1]
    parts = parts[:len(parts) - (node.level - 1)]
    return ".".join(parts + ([node.module] if node.module else []))


def import_graph():
    """module -> the modules it imports anywhere in its text (a package's __init__ counted for
    each of its modules imported from outside it, as Python runs it first)."""
    modules = _modules()
    edges = defaultdict(set)
    for name, path in modules.items():
        with open(path) as f:
            tree = ast.parse(f.read())
        for node in ast.walk(tree):
            targets = []
            if isinstance(node, ast.ImportFrom):
                base = _target(name, path.endswith("__init__.py"), node)
                if base is None:
                    continue
                for alias in node.names:
                    sub = f"{base}.{alias.name}" if base else alias.name
                    targets.append(sub if sub in modules else base)
            elif isinstance(node, ast.Import):
                targets = [a.name[len("srcgrad."):] if a.name != "srcgrad" else "" for a in node.names
                           if a.name == "srcgrad" or a.name.startswith("srcgrad.")]
            for t in targets:
                if t not in modules or t == name:
                    continue
                edges[name].add(t)
                parts = t.split(".")
                for k in range(1, len(parts)):    # the packages above t (srcgrad's own runs first anyway)
                    package = ".".join(parts[:k])
                    if package in modules and package != name and not name.startswith(package + "."):
                        edges[name].add(package)
    return modules, edges


def circles(modules, edges):
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index, low, stack, on, found, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = set()
            while True:
                w = stack.pop()
                on.discard(w)
                part.add(w)
                if w == v:
                    break
            if len(part) > 1:
                found.append(frozenset(part))

    for v in sorted(modules):
        if v not in index:
            visit(v)
    return set(found)


def test_no_new_import_circle():
    found = circles(*import_graph())
    new = found - KNOWN_CIRCLES
    assert not new, "import circles: " + "; ".join(" <-> ".join(sorted(c)) for c in new)


def test_every_known_circle_is_still_there():
    gone = KNOWN_CIRCLES - circles(*import_graph())
    assert not gone, "broken at last, take these off KNOWN_CIRCLES: " + "; ".join(" <-> ".join(sorted(c)) for c in gone)


def test_the_graph_sees_a_circle():
    """The walk finds a circle where there is one (so an empty answer means something)."""
    modules = {"a": "", "b": "", "c": ""}
    assert circles(modules, {"a": {"b"}, "b": {"c"}, "c": {"a"}}) == {frozenset("abc")}
    assert circles(modules, {"a": {"b"}, "b": {"c"}}) == set()
