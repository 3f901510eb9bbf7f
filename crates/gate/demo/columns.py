"""Property: the export's header lists the columns in their declared order.

The header is built from a set of column names, so its order follows the process's string
hash seed: a real source of nondeterminism from one process to the next.
"""
import sys

from oracle import serve

DECLARED = ["id", "total"]


def header(mode):
    if mode == "export":
        return ",".join({"id", "total"})
    return ",".join(DECLARED)


def check(doc):
    if not (isinstance(doc, dict) and doc.get("mode") in ("export", "import", "list")):
        return None
    got = header(doc["mode"])
    if got != ",".join(DECLARED):
        return "header columns out of declared order"
    return None


sys.exit(serve(check))
