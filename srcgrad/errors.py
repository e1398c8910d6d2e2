"""The compiler's errors (the eager mode raises PyTorch's exception types instead).

Example:
    >>> issubclass(UnsupportedSyntaxError, SyntaxError)
    True
"""


class SrcGradError(Exception):
    """Base of every error srcgrad's compiler raises."""


class UnsupportedSyntaxError(SrcGradError, SyntaxError):
    """A construct the compiler does not handle, with the user's file, line and a caret."""


class TypingError(SrcGradError, TypeError):
    """Types that do not fit, naming the variable and both types."""
