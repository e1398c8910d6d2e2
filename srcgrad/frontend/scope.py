"""Python's scope rule as the frontend reads it from the AST: the names a function body binds
are its locals (``assigned_names``: assignment and loop targets, ``def``s, the containers and
arrays that ``l.append(v)``, ``x[i] = v`` or ``np.add.at(x, ...)`` rebind); names bound by
comprehensions are local to them (``comprehension_names``). Everything else is read from the
closure or the module globals while compiling.

Example:
    >>> import ast
    >>> body = ast.parse("s = 0\\nfor i in range(3):\\n    l.append(i)\\n    x[i] = s").body
    >>> assigned_names(body)
    ['s', 'i', 'l', 'x']
"""
import ast

# the list methods that change a list in place: a new version of the list (containers.py)
LIST_METHODS = ("append", "extend", "insert")


def assigned_names(stmts):
    """Every name a list of statements may bind (assignment targets, for targets)."""
    out = []
    for node in stmts:
        for sub in ast.walk(node):
            targets = []
            if isinstance(sub, ast.Assign):
                targets = sub.targets
            elif isinstance(sub, (ast.AugAssign, ast.AnnAssign)):
                targets = [sub.target]
            elif isinstance(sub, ast.For):
                targets = [sub.target]
            elif isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and sub.name not in out:
                out.append(sub.name)
            elif isinstance(sub, ast.Expr) and isinstance(sub.value, ast.Call) and isinstance(
                    sub.value.func, ast.Attribute) and sub.value.func.attr in LIST_METHODS:
                targets = [sub.value.func.value]           # l.append(v) makes a new version of l
            elif isinstance(sub, ast.Expr) and isinstance(sub.value, ast.Call) and sub.value.args and \
                    isinstance(sub.value.func, ast.Attribute) and sub.value.func.attr == "at":
                targets = sub.value.args[:1]        # np.add.at(x, idx, v) makes a new version of x
            for t in targets:
                while isinstance(t, ast.Subscript):      # x[i] = v makes a new version of x
                    t = t.value
                for n in ast.walk(t):
                    if isinstance(n, ast.Name) and n.id not in out:
                        out.append(n.id)
    return out


def comprehension_names(stmts):
    """The names comprehensions bind (local to each comprehension, as in Python 3)."""
    return {n.id for stmt in stmts for c in ast.walk(stmt) if isinstance(c, ast.comprehension)
            for n in ast.walk(c.target) if isinstance(n, ast.Name)}
