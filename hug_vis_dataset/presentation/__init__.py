"""What a person reads, rendered one way everywhere: escaping of text from data (``escaping``), the labels of
every key (``labels``), the table renderers (``tables``), skipped input lines (``skipped_lines``), the citation and
links (``citation``) and the analysis modules' fields (``analysis_fields``).

Below ``statistics/``, ``reporting/``, ``leaderboard/``, ``studies/`` and ``space/``: it imports the catalog and the
data model, nothing that computes.
"""
