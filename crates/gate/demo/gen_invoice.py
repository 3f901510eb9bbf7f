"""Generator: PROP_CASES invoices with mixed tax rates, seeded by PROP_SEED."""
import json
import os
import random

rng = random.Random(int(os.environ["PROP_SEED"]))
for _ in range(int(os.environ["PROP_CASES"])):
    lines = [
        {"cents": rng.randint(0, 50000), "rate": rng.choice(["standard", "reduced"]), "sku": f"SKU-{rng.randint(1, 999)}"}
        for _ in range(rng.randint(0, 8))
    ]
    print(json.dumps({"customer": rng.randint(1, 10**6), "lines": lines}))
