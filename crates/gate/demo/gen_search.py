"""Generator: PROP_CASES searches, seeded by PROP_SEED; the eighth has an empty query."""
import json
import os
import random

rng = random.Random(int(os.environ["PROP_SEED"]))
for i in range(int(os.environ["PROP_CASES"])):
    query = "" if i == 7 else "".join(rng.choice("abcxyz") for _ in range(rng.randint(1, 6)))
    print(json.dumps({"query": query, "results": rng.randint(1, 40)}))
