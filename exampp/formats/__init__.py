"""File formats, one module per format family: each reader turns a file into the records of
:mod:`exampp.collection` (or a format's own records) and every bad line into one
:class:`~exampp.errors.InputError` naming the file and line; each writer writes atomically.
The layers above never read a file themselves.
"""
