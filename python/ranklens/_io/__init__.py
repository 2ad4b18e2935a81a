"""Readers and writers for the formats users hold runs and qrels in.

pandas, pyarrow and polars frames, Parquet, ranx-style JSON
(``{query_id: {doc_id: value}}``), JSON Lines (one row per line) and
``ir_datasets``-style iterables of named tuples.  Each
``Qrels.from_*`` / ``Run.from_*`` constructor imports its format's module when
called (so ``import ranklens`` loads none of them) and gets encoded arrays back;
nothing here names :class:`~ranklens.Qrels` or :class:`~ranklens.Run`.

Columnar input never goes through Python row by row: id columns reach the
Rust core (``_ranklens.encode_columns``) in Arrow's string layout (data
buffer + offsets, borrowed with no copy from pyarrow arrays; dictionary
columns as dictionary + indices; integer ids as integers, written in decimal
by the core), values as a float64 array, and the rows are encoded with the GIL
released.  A column of Python objects (pandas ``object`` dtype without pyarrow)
is packed into that layout by one Rust call.  Chunked Arrow columns are cut at
the union of their chunk boundaries (zero-copy slices), so no column is
concatenated.

pandas, pyarrow and polars are optional: each is imported by the function that
needs it, and a missing one raises an ``ImportError`` naming the extra to
install (``pip install 'ranklens[pandas]'``, ``[arrow]``, ``[polars]``).

Rows in errors are 0-based positions in the input (for JSON Lines read
without pyarrow: 1-based line numbers).
"""
