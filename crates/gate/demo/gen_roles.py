"""Generator: PROP_CASES users, seeded by PROP_SEED."""
import json
import os
import random

rng = random.Random(int(os.environ["PROP_SEED"]))
for _ in range(int(os.environ["PROP_CASES"])):
    print(json.dumps({
        "user_id": rng.randint(0, 3),
        "role": rng.choice(["", "admin", "editor", "viewer"]),
        "name": "".join(rng.choice("abcdefgh") for _ in range(rng.randint(0, 12))),
        "groups": [rng.randint(1, 99) for _ in range(rng.randint(0, 4))],
    }))
