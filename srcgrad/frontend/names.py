"""The one scheme for every name the frontend makes up (loop flags, trip counters, return
slots): a base and the first number that gives a valid Python name no name of the user's
function uses. The desugared source stays printable and runnable, and a made-up name can
never clash with a user's (``broken0`` is taken only if the user never wrote ``broken0``).

Example:
    >>> import ast
    >>> names = FreshNames(ast.parse("def f(k0):\\n    return k0"))
    >>> names("k"), names("k"), names.kind("k2"), names.kind("x")
    ('k1', 'k2', 'k', None)
"""
import ast


class FreshNames:
    """Makes up names for one function; remembers what each is for (its base)."""

    def __init__(self, tree):
        self.taken = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Name):
                self.taken.add(node.id)
            elif isinstance(node, ast.arg):
                self.taken.add(node.arg)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.taken.add(node.name)
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                self.taken.update(node.names)
        self.kinds = {}

    def __call__(self, base):
        k = 0
        while f"{base}{k}" in self.taken:
            k += 1
        name = f"{base}{k}"
        self.taken.add(name)
        self.kinds[name] = base
        return name

    def kind(self, name):
        """The base of a made-up name ("broken" for ``broken0``); None for the user's names."""
        return self.kinds.get(name)
