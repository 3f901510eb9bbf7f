"""Property: paging through search results visits every result once."""
import sys

from oracle import serve


def pages(query, results):
    per_page = max(1, len(query))  # an empty query still pages
    start, out = 0, []
    while start < len(results):
        out.append(results[start:start + per_page])
        start += per_page
    return out


def check(doc):
    if not (isinstance(doc, dict) and isinstance(doc.get("query"), str) and isinstance(doc.get("results"), int)):
        return None
    results = list(range(max(0, min(doc["results"], 1000))))
    flat = [r for page in pages(doc["query"], results) for r in page]
    if flat != results:
        return "pages lose or repeat results"
    return None


sys.exit(serve(check))
