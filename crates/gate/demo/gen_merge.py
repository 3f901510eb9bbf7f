"""Generator: PROP_CASES inputs [a, b, c] of nested configuration objects, seeded by PROP_SEED."""
import json
import os
import random

rng = random.Random(int(os.environ["PROP_SEED"]))


def doc(depth=0):
    out = {}
    for _ in range(rng.randint(0, 4)):
        key = rng.choice(["cache", "retries", "region", "timeout", "tags"])
        roll = rng.random()
        if roll < 0.3 and depth < 2:
            out[key] = doc(depth + 1)
        elif roll < 0.45:
            out[key] = None
        else:
            out[key] = rng.randint(0, 1000)
    return out


for _ in range(int(os.environ["PROP_CASES"])):
    print(json.dumps([doc(), doc(), doc()]))
