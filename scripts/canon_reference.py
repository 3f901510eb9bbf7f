#!/usr/bin/env python3
"""The reference of freezegate's canonical form v1 (SPEC section 3), for differential tests.

    canon_reference.py [--digest | --id] < doc.json   canonical bytes (or hex and a newline)
    canon_reference.py --lines < docs                  one document per line in, one result
                                                       per line out: the canonical bytes, or
                                                       "ERROR <reason>" for a rejected line

This is the definition, written plainly: json.loads, NFC on every string (keys included),
json.dumps with sorted keys and no whitespace. It does not detect what SPEC section 3 adds as
errors beyond what json.loads itself refuses (duplicate keys, lone surrogates, NaN ...):
the differential test only feeds it documents that have a canonical form.
"""

import hashlib
import json
import sys
import unicodedata

# Integers of any length (Python 3.11 limits int/str conversions to 4300 digits by default).
if hasattr(sys, "set_int_max_str_digits"):
    sys.set_int_max_str_digits(0)


def nfc(value):
    if isinstance(value, str):
        return unicodedata.normalize("NFC", value)
    if isinstance(value, list):
        return [nfc(item) for item in value]
    if isinstance(value, dict):
        return {nfc(key): nfc(item) for key, item in value.items()}
    return value


def canonical(text):
    value = nfc(json.loads(text))
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode("utf-8")


def main(argv):
    out = sys.stdout.buffer
    if argv == ["--lines"]:
        data = sys.stdin.buffer.read()
        lines = data.split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        for line in lines:
            try:
                out.write(canonical(line))
            except (ValueError, RecursionError) as err:
                reason = str(err).replace("\n", " ")
                out.write(b"ERROR " + reason.encode("utf-8", "replace"))
            out.write(b"\n")
        return 0
    if argv not in ([], ["--digest"], ["--id"]):
        sys.stderr.write(__doc__)
        return 3
    try:
        data = canonical(sys.stdin.buffer.read())
    except (ValueError, RecursionError) as err:
        sys.stderr.write(f"error: {err}\n")
        return 3
    if argv:
        digest = hashlib.sha256(data).hexdigest()
        out.write((digest if argv == ["--digest"] else digest[:16]).encode() + b"\n")
    else:
        out.write(data)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
