"""The bad-input tier: every public op of the sample table, each tensor argument replaced in
turn by malformed values (tests/ops/bad_inputs.py). Values no op accepts must raise TF's kind
of error naming the op or the argument; no value may let an implementation exception escape
or leave a context stack changed. Ops added later get the tier through their samples.
scripts/bad_input_report.py prints the counts."""
import pytest

from tests.ops import bad_inputs
from tests.ops import samples as S

pytestmark = pytest.mark.filterwarnings("ignore")

CASES = list(bad_inputs.every_case(S.SAMPLES))
BY_SAMPLE = {}
for _case in CASES:
    BY_SAMPLE.setdefault(_case[0].id, []).append(_case)

# Messages that name neither op nor argument but are TF's own words (kept as they are).
TF_WORDING = {("StridedSlice-iteration", "scalar"), ("StridedSlice-iteration", "huge"),
              ("StridedSlice-tensor_index", "dict")}
# None is a valid value of these optional tensor arguments
OPTIONAL = {("DenseBincount-weights_minlength_maxlength", 1)}


@pytest.mark.parametrize("sample_id", sorted(BY_SAMPLE))
def test_malformed_arguments_raise_named_errors(sample_id):
    failures = []
    for sample, position, category, make in BY_SAMPLE[sample_id]:
        outcome, detail = bad_inputs.classify(sample, position, category, make)
        where = f"{sample.id}[{position}] {category}: {outcome}: {detail[:200]}"
        if (sample.id, position) in OPTIONAL and category == "none":
            continue
        if outcome in ("internal", "silent"):
            failures.append(where)
        elif (outcome == "unnamed" and category in bad_inputs.REJECTED
              and (sample.id, category) not in TF_WORDING):
            failures.append(where)
    assert not failures, "\n".join(failures)


def test_the_tier_covers_the_public_ops():
    assert len({case[0].op for case in CASES}) >= 140
    assert len(CASES) >= 4000
