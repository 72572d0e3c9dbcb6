"""The data model every part reads: the 8,400-unit grid (``grid``), the release tree's layout (``layout``) and
reading (``release``), the per-clip result rows (``results``) and the paper's reported numbers (``paper_tables``).

Plain facts and their readers only: this package imports the catalog, ``errors`` and ``readers/``, nothing above.
"""
