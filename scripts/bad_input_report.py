"""Print the bad-input tier's outcome counts: every eager op sample called with each tensor
argument replaced by malformed values (tests/ops/bad_inputs.py), per category.

    python3 scripts/bad_input_report.py [--details OUTCOME]
"""
from __future__ import annotations

import collections
import os
import sys
import warnings

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main() -> None:
    warnings.simplefilter("ignore")
    from tests.ops import samples
    from tests.ops import bad_inputs
    details = sys.argv[sys.argv.index("--details") + 1] if "--details" in sys.argv else None
    counts = collections.Counter()
    by_category = collections.defaultdict(collections.Counter)
    for sample, position, category, make in bad_inputs.every_case(samples.SAMPLES):
        outcome, detail = bad_inputs.classify(sample, position, category, make)
        if outcome == "skip":
            continue
        counts[outcome] += 1
        by_category[category][outcome] += 1
        if outcome == details:
            print(f"{sample.id}[{position}] {category}: {detail[:160]}")
    outcomes = ["named", "unnamed", "internal", "silent", "accepted", "python"]
    print(f"{'category':10}" + "".join(f"{o:>10}" for o in outcomes) + f"{'total':>10}")
    for category, row in sorted(by_category.items()):
        print(f"{category:10}" + "".join(f"{row[o]:>10}" for o in outcomes)
              + f"{sum(row.values()):>10}")
    print(f"{'all':10}" + "".join(f"{counts[o]:>10}" for o in outcomes)
          + f"{sum(counts.values()):>10}")


if __name__ == "__main__":
    main()
