"""srcgrad's version, in a module of its own so that any part of the package can read it
without importing the package (the disk cache's key holds it: other versions compile again).

Example:
    >>> __version__
    '0.1.0'
"""
__version__ = "0.1.0"
