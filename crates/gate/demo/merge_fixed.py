"""Property: merging configuration documents is associative.

Input [a, b, c]; fails when merge(merge(a, b), c) != merge(a, merge(b, c)).
"""
import sys

from oracle import serve


def merge(base, patch):
    """Merge as patches compose: each key of the patch replaces the base's, and a null is
    kept as a deletion marker that the reader applies, so merging stays associative."""
    out = dict(base)
    out.update(patch)
    return out


def check(doc):
    if not (isinstance(doc, list) and len(doc) == 3 and all(isinstance(d, dict) for d in doc)):
        return None  # outside the domain: a discard, not a failure
    a, b, c = doc
    left, right = merge(merge(a, b), c), merge(a, merge(b, c))
    if left != right:
        return "not associative"
    return None


sys.exit(serve(check))
