"""The compiler's errors, with the user's source line and a caret (the eager mode raises
PyTorch's exception types instead).

Example:
    >>> issubclass(UnsupportedSyntaxError, SyntaxError)
    True
"""


class SrcGradError(Exception):
    """Base of every error srcgrad's compiler raises."""


def excerpt(loc, source_lines=None):
    """``file:line:col`` and the source line with a caret under the column."""
    if loc is None:
        return ""
    where = f'File "{loc.file}", line {loc.line}, column {loc.col + 1}'
    if loc.func:
        where += f", in {loc.func}"
    line = None
    if source_lines and 0 < loc.line <= len(source_lines):
        line = source_lines[loc.line - 1]
    else:
        import linecache
        line = linecache.getline(loc.file, loc.line) or None
    if line is None:
        return where
    line = line.rstrip("\n")
    stripped = line.lstrip()
    cut = len(line) - len(stripped)
    return f"{where}\n    {stripped}\n    {' ' * max(loc.col - cut, 0)}^"


class UnsupportedSyntaxError(SrcGradError, SyntaxError):
    """A construct the compiler does not handle, with the user's file, line and a caret."""

    def __init__(self, message, loc=None, hint=None):
        self.plain = message
        self.loc = loc
        text = message
        if loc is not None:
            text = f"{message}\n{excerpt(loc)}"
        if hint:
            text += f"\n{hint}"
        super().__init__(text)
        if loc is not None:
            self.filename, self.lineno, self.offset = loc.file, loc.line, loc.col + 1

    def __str__(self):
        return self.args[0]


class TypingError(SrcGradError, TypeError):
    """Types that do not fit, naming the variable and both types."""

    def __init__(self, message, loc=None):
        self.plain = message
        self.loc = loc
        super().__init__(f"{message}\n{excerpt(loc)}" if loc is not None else message)


NEGATIVE_INT_POWER = ("srcgrad: an int to a negative int power: Python's result would be a float (2 ** -1 is "
                      "0.5) and numpy's an error, but compiled code keeps an int ** int an int: write float(a) ** b")
