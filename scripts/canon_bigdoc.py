#!/usr/bin/env python3
"""Writes a large JSON document for measuring the memory of `cargo xtask canon`.

    canon_bigdoc.py OUT [MEGABYTES]     (default 100)

One object holding an array of pretty-printed records (integers, floats, short strings with
non-ASCII and non-NFC text, nested objects) until the size is reached, then a count. The
same arguments always give the same bytes (fixed seed).
"""

import json
import random
import sys


def main(argv):
    if not argv:
        sys.stderr.write(__doc__)
        return 3
    target = int(float(argv[1]) * 1_000_000) if len(argv) > 1 else 100_000_000
    rng = random.Random(1)
    words = ["alpha", "beta", "gamma", "café", "naïve", "e\u0301t\u00e9", "数据", "Ωmega", "z"]

    def record(i):
        return {
            "id": i,
            "name": rng.choice(words) + str(i),
            "price": rng.random() * 1000,
            "qty": rng.randint(-10**6, 10**6),
            "tags": [rng.choice(words) for _ in range(4)],
            "nested": {"b": [1.5, 2e-7, 1e22, None, True], "a": "x" * rng.randint(0, 30)},
        }

    with open(argv[0], "w", encoding="utf-8") as f:
        f.write('{"records": [')
        n = size = 0
        while size < target:
            text = json.dumps(record(n), ensure_ascii=False, indent=1)
            if n:
                f.write(",\n")
            f.write(text)
            size += len(text.encode("utf-8"))
            n += 1
        f.write('], "meta": {"count": %d}}' % n)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
