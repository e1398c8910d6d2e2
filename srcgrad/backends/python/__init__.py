"""The python backend: IR → Python ``ast`` → source text (astor) → a compiled function.

The source is meant to be read like the user's own code: one statement per source line
where the IR allows (single-use temporaries folded back into expressions), a
``# line N: <source>`` comment heading each group, loops as loops (a reverse sweep as
``for i in reversed(range(n))``), constants written in place, and names taken from the
user's variables (``s``, ``s_1``; adjoints ``ds``, ``dx``).

- ``exprs.py``: the expression table, one entry per pure primitive (``EXPR["add"]``);
- ``plan.py``: what is decided before printing (folds, loop headers, shared names);
- ``emit.py``: statements, regions and names (the statement table ``STMT``);
- ``source.py``: printing, compiling, and numpy's IndexErrors said in the user's words.

Example:
    src = to_source(fn)        # fn: an IR Function
    f = compile_function(fn)   # a Python callable
"""
from .emit import STMT, Emitter
from .exprs import EXPR
from .source import compile_function, generate, to_source

_Emitter = Emitter      # the name tests/compiler/test_ir.py knows it by

__all__ = ["EXPR", "STMT", "Emitter", "compile_function", "generate", "to_source"]
