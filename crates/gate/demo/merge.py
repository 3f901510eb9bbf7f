"""Property: merging configuration documents is associative.

Input [a, b, c]; fails when merge(merge(a, b), c) != merge(a, merge(b, c)).
"""
import sys

from oracle import serve


def merge(base, patch):
    """Deep merge: objects merge key by key, null deletes a key, anything else replaces."""
    out = dict(base)
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        elif isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = value
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
