"""Reading a function's source, once, and refusing a source file edited since the function
was imported (the compiler would compile code that no longer runs).

Example:
    >>> src, file, first_line = source_of(source_of)      # doctest: +SKIP
    >>> src.splitlines()[0]                                # doctest: +SKIP
    'def source_of(fn):'
"""
import dis
import importlib.machinery
import inspect
import sys
import textwrap
import types
import weakref

from ..errors import UnsupportedSyntaxError


_SOURCES = weakref.WeakKeyDictionary()      # function -> its source, read once (at decoration)


def source_of(fn):
    """(dedented source, file name, first line number) of a plain Python function, read once:
    editing the file later changes nothing, and a file edited since the function was
    imported (its source no longer compiles to the function's code) is a clear error."""
    try:
        code, out = _SOURCES[fn]
        if code is getattr(fn, "__code__", None):       # (f.__code__ = ... makes another function)
            return out
    except (KeyError, TypeError):
        pass
    try:
        src = textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError) as e:
        raise UnsupportedSyntaxError(
            f"srcgrad cannot read the source of {getattr(fn, '__qualname__', fn)!r}: inspect.getsource failed "
            f"({e}). Functions typed into the REPL or made with exec() have no source file; put the function in "
            "a .py file (or a notebook cell) and import it.") from None
    file = inspect.getsourcefile(fn) or "<unknown>"
    if _plainly_compiled(fn) and not _compiles_to(src, fn.__code__):
        raise UnsupportedSyntaxError(
            f"the source of {fn.__qualname__} in {file} has changed since it was imported: srcgrad compiles the "
            "source file, which no longer matches the running function. Reload the module (importlib.reload) "
            "or restart, then decorate again.")
    out = (src, file, fn.__code__.co_firstlineno)
    try:
        _SOURCES[fn] = (getattr(fn, "__code__", None), out)
    except TypeError:
        pass
    return out


def remember_source(fn, entry):
    """Take ``entry`` (what ``source_of`` returns) as ``fn``'s source unless it has one already:
    a function unpickled in a process that has not its file (srcgrad/pickling.py)."""
    try:
        _SOURCES.setdefault(fn, (getattr(fn, "__code__", None), entry))
    except TypeError:
        pass


def _plainly_compiled(fn):
    """Whether Python's own loader compiled ``fn``'s module from its file, so that the file's
    source compiles to the same code (an import hook, pytest's assert rewriting say, does not)."""
    module = sys.modules.get(getattr(fn, "__module__", None))
    return isinstance(getattr(module, "__loader__", None), importlib.machinery.SourceFileLoader)


def _compiles_to(src, code):
    """Whether ``src`` defines a function with ``code``'s bytecode (closures: its arguments)."""
    try:
        module = compile(src, "<source check>", "exec")
    except SyntaxError:
        return True             # not a def the frontend can read: it says so itself
    found = [c for c in module.co_consts if isinstance(c, types.CodeType) and c.co_name == code.co_name]
    if not found:
        return code.co_name == "<lambda>"
    if code.co_freevars:        # compiled as a closure, its bytecode reads cells: compare the signature
        return found[0].co_varnames[:found[0].co_argcount] == code.co_varnames[:code.co_argcount]
    return _gist(found[0]) == _gist(code)


_GIST = ("BINARY_OP", "COMPARE_OP", "UNARY_", "LOAD_CONST", "LOAD_FAST", "STORE_FAST", "RETURN", "CALL", "JUMP")


def _gist(code):
    """What a code object computes, without what differs between compilations of the same
    source (how globals and methods are loaded, caches): arithmetic, constants, locals."""
    def arg(i):
        return i.argval.co_name if isinstance(i.argval, types.CodeType) else i.argrepr
    instructions = list(dis.get_instructions(code))
    return [(i.opname[:9], arg(i)) for i in instructions if i.opname.startswith(_GIST) and "JUMP" not in i.opname] + \
        [sum(1 for i in instructions if "JUMP" in i.opname)]
