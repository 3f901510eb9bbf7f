#!/usr/bin/env python3
"""Times the Python reference of canonical form v1 over a corpus, for `cargo bench -p
freezegate-canon`: every `*.json` file in DIR is read into memory first, then each document
goes through json.loads, NFC, json.dumps and sha256 in-process (no process start or file
reads in the timed part). The best of --runs passes is reported, timed by thread CPU time
(time.thread_time), as the Rust side is, so that a loaded machine does not skew the ratio.

    canon_bench.py DIR [--runs N]

Prints one line of JSON: {"documents", "bytes", "seconds", "mb_per_s", "digest_of_digests"};
the last is the sha256 of all documents' hex digests joined by newlines, in file-name order,
so the caller can check that both sides computed the same digests.
"""

import hashlib
import json
import os
import sys
import time

# The one definition of canonical form v1 lives beside this script; importing it also lifts
# Python's limit on integer digits.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from canon_reference import canonical  # noqa: E402


def digest(text):
    return hashlib.sha256(canonical(text)).hexdigest()


def main(argv):
    if not argv or argv[0].startswith("-"):
        sys.stderr.write(__doc__)
        return 3
    directory = argv[0]
    runs = int(argv[argv.index("--runs") + 1]) if "--runs" in argv else 3
    names = sorted(n for n in os.listdir(directory) if n.endswith(".json"))
    docs = []
    for name in names:
        with open(os.path.join(directory, name), "rb") as f:
            docs.append(f.read())
    total = sum(len(d) for d in docs)
    best = None
    digests = []
    for _ in range(runs):
        start = time.thread_time()
        digests = [digest(d) for d in docs]
        elapsed = time.thread_time() - start
        best = elapsed if best is None else min(best, elapsed)
    joined = "\n".join(digests).encode("ascii")
    print(
        json.dumps(
            {
                "documents": len(docs),
                "bytes": total,
                "seconds": best,
                "mb_per_s": total / best / 1e6,
                "digest_of_digests": hashlib.sha256(joined).hexdigest(),
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
