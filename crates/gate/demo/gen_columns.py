"""Generator: PROP_CASES report requests, half of them exports, seeded by PROP_SEED."""
import json
import os
import random

rng = random.Random(int(os.environ["PROP_SEED"]))
for i in range(int(os.environ["PROP_CASES"])):
    print(json.dumps({"mode": "export" if i % 2 == 0 else rng.choice(["import", "list"])}))
