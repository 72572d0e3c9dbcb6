"""The report's HTML files as whole documents: ``<!DOCTYPE html>``, UTF-8 declared, a title and the
table styles (best bold, second underlined, readable numbers), so a file opened alone in a browser
shows its non-ASCII text (arrows, names) and its table as the Markdown report does.

Example:
    >>> page = html_page("Table 11 (matting)", "<table><tr><td>MAD ↓</td></tr></table>")
    >>> page.splitlines()[:3]
    ['<!DOCTYPE html>', '<html lang="en">', '<head>']
    >>> '<meta charset="utf-8">' in page and "<title>Table 11 (matting)</title>" in page
    True
"""

from __future__ import annotations

import html

#: Table styles of every HTML file of the report.
REPORT_CSS = ("body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:2rem;color:#111}"
              "table{border-collapse:collapse;margin:1rem 0}caption{caption-side:top;text-align:left;"
              "padding:.4rem 0;max-width:70rem;color:#333}th,td{border:1px solid #bbb;padding:.3rem .6rem}"
              "th{background:#f2f2f2}td{font-variant-numeric:tabular-nums}p.note{max-width:70rem;color:#333}")


def html_page(title: str, body: str) -> str:
    """``body`` (HTML the report rendered, already escaped) in a complete UTF-8 document titled ``title``."""
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<title>{html.escape(title)}</title>\n<style>{REPORT_CSS}</style>\n</head>\n<body>\n{body}\n"
            "</body>\n</html>\n")


def html_note(text: str) -> str:
    """One plain-text note under a table, escaped."""
    return f'<p class="note">{html.escape(text)}</p>'


__all__ = ["REPORT_CSS", "html_note", "html_page"]
