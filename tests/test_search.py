"""The configuration search against the exhaustive reference, and its rules one by one.

Independent facts checked: on 500 random small cases the branch-and-bound search finds the
same best time as brute-force enumeration (another code path), and its answer obeys each of
the paper's selection rules written out here on the configuration and its evaluation (not the
masks the search chose with); the enumeration's size counted by hand; the printed rows of
table:parallel_methods_comparison; the cheapest GPU count against a search with one GPU less
and the hand bound 1284 GPUs for 180 d; the unpartitioned state 12 p / (n_l n_a) by hand.
"""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from lgacc.errors import UserInputError
from lgacc.model.config import Method
from lgacc.model.hardware import load_hardware
from lgacc.model.transformer import x_model
from lgacc.search import Parallelism, cheapest, divisors, fastest, parse_parallelism, rule_masks
from lgacc.search.reference import enumerate_all, reference_cheapest, reference_fastest

A100 = load_hardware("a100-80gb")


def random_case(rng: random.Random):
    """A small model on perturbed hardware, so that every rule binds somewhere.

    Small models have low arithmetic intensities, so the links are made faster
    (x 30, then randomly x 1/8 .. 8) and the memory smaller for the constraints to bite.
    """
    x = rng.choice([2, 2, 4, 4, 6, 8])
    scale = lambda: 30 * 2 ** rng.uniform(-3, 3)  # noqa: E731
    hardware = A100.replace(
        memory_bytes=A100.memory_bytes * 2 ** rng.uniform(-16, -6),
        infiniband_bandwidth_bytes_per_s=A100.infiniband_bandwidth_bytes_per_s * scale(),
        nvlink_bandwidth_bytes_per_s=A100.nvlink_bandwidth_bytes_per_s * scale(),
        cpu_gpu_bandwidth_bytes_per_s=A100.cpu_gpu_bandwidth_bytes_per_s * scale(),
        pcie_bandwidth_bytes_per_s=A100.pcie_bandwidth_bytes_per_s * scale(),
        gpus_per_node=rng.choice([1, 2, 4, 8, 16]),
    )
    method = rng.choice(list(Method))
    parallelism = rng.choice(list(Parallelism))
    max_gpus = rng.choice([None, None, rng.randint(1, 48)])
    allow_offload = rng.random() < 0.8
    return x_model(x), hardware, method, parallelism, max_gpus, allow_offload


CASES = 500
#: The first cases of the same random sequence, run by ``make test``; all :data:`CASES` run with the property-based
#: suites (``make fuzz``, which .ci/run calls): issue #34, fast feedback.
QUICK_CASES = 120


def assert_obeys_the_papers_rules(model, hardware, method, parallelism, found, max_gpus, allow_offload, label,
                                  partitioned=None):
    """The selection rules of sec:methodology ("Optimal configuration"), written out on the chosen
    configuration and its evaluation, independently of the masks the search used to choose it."""
    c, e = found.config, found.evaluation
    layered = method is Method.IMPROVED
    is_partitioned = method is not Method.BASELINE if partitioned is None else partitioned
    uses = {Parallelism.NONE: (0, 0, 0), Parallelism.DATA: (1, 0, 0), Parallelism.DATA_PIPE: (1, 1, 0),
            Parallelism.DATA_TENSOR: (1, 0, 1), Parallelism.PIPE_TENSOR: (0, 1, 1), Parallelism.THREE_D: (1, 1, 1)}
    data, pipe, tensor = uses[parallelism]
    partitioned_only = is_partitioned and not layered  # "in the partitioned approach, no pipeline parallelism"
    assert (c.n_b == 1 or data) and (c.n_l == 1 or (pipe and not partitioned_only)) and (c.n_a == 1 or tensor), label
    assert model.d_l % c.n_l == 0 and model.d_a % c.n_a == 0, label
    b = c.n_b * c.n_mu * c.b_mu
    assert e.b == b and e.n_gpu == c.n_b * c.n_l * c.n_a, label
    # "at or just below the critical batch": one more micro-batch per instance would exceed it
    assert b <= model.critical_batch < b + c.n_b * c.b_mu, label
    assert c.n_mu >= c.n_l, label
    assert max_gpus is None or e.n_gpu <= max_gpus, label
    on_gpu = e.memory.non_offloadable + (0 if c.offload else e.memory.offloadable)
    assert on_gpu <= hardware.memory_bytes * (1 + 1e-12), label
    # offload only if allowed, and only when the whole memory would not fit
    if c.offload:
        assert allow_offload and e.memory.total > hardware.memory_bytes, label
    assert all(e.overheads[name] <= 0.25 + 1e-12 for name in e.overheads if name != "bubble"), (label, e.overheads)
    # no bottleneck in the overlapped transfers; the baseline's reduction with a pipeline is not overlapped
    assert e.overheads["state_offload"] <= 1e-12 and e.overheads["checkpoint_offload"] <= 1e-12, label
    assert e.overheads["pcie"] <= 1e-12, label
    if not (not layered and not is_partitioned and c.n_l > 1):
        assert e.overheads["data"] <= 1e-12, (label, e.overheads)


@pytest.mark.parametrize("cases", [pytest.param(QUICK_CASES, id="quick"),
                                   pytest.param(CASES, id="all", marks=pytest.mark.fuzz)])
def test_search_is_as_fast_as_the_exhaustive_reference(monkeypatch, cases):
    """On 500 random cases (``make fuzz``; the first 120 in ``make test``) the search finds the reference's best
    time, never a slower one.

    Every other case forces the chunked branch-and-bound visit (used for large
    candidate sets) with tiny chunks, so that both visits are checked.
    """
    import lgacc.search.core

    rng = random.Random(20210)
    feasible = infeasible = 0
    for case in range(cases):
        model, hardware, method, parallelism, max_gpus, allow_offload = random_case(rng)
        monkeypatch.setattr(lgacc.search.core, "SINGLE_PASS", 0 if case % 2 else 16384)
        monkeypatch.setattr(lgacc.search.core, "CHUNK", 7)
        found = fastest(model, hardware, method, parallelism, max_gpus=max_gpus, allow_offload=allow_offload, explain=False)
        best, visited = reference_fastest(model, hardware, method, parallelism, max_gpus=max_gpus, allow_offload=allow_offload)
        label = f"case {case}: {model.name} {method.value} {parallelism.value} max_gpus={max_gpus} offload={allow_offload}"
        assert found.feasible == (best is not None), label
        if best is None:
            infeasible += 1
            assert found.binding, label
            continue
        feasible += 1
        assert visited >= found.candidates, label
        t = found.evaluation.time_days
        assert t <= best["time_days"] * (1 + 1e-9), f"{label}: search {t} slower than reference {best}"
        assert t >= best["time_days"] * (1 - 1e-9), f"{label}: search {t} beats the reference {best}: reference not exhaustive"
        if method is Method.BASELINE and parallelism.pipe:
            assert found.config.n_l == best["n_l"], label
        # the search's answer obeys every rule, each re-stated here from the paper's words (not rule_masks)
        assert_obeys_the_papers_rules(model, hardware, method, parallelism, found, max_gpus, allow_offload, label)
    # the random cases exercise both outcomes (500 cases: over 300 feasible, over 5 infeasible)
    assert feasible > 0.6 * cases and infeasible > cases / 100, (feasible, infeasible)


def test_cheapest_matches_the_exhaustive_reference():
    rng = random.Random(7)
    met = 0
    for case in range(60):
        model, hardware, method, parallelism, max_gpus, allow_offload = random_case(rng)
        quick = fastest(model, hardware, method, parallelism, max_gpus=max_gpus, allow_offload=allow_offload, explain=False)
        if not quick.feasible:
            continue
        target = quick.evaluation.time_days * rng.uniform(1.0, 6.0)
        found = cheapest(model, hardware, method, parallelism, target, max_gpus=max_gpus, allow_offload=allow_offload)
        best, _ = reference_cheapest(model, hardware, method, parallelism, target, max_gpus=max_gpus, allow_offload=allow_offload)
        label = f"case {case}: {model.name} {method.value} {parallelism.value} target={target:.4g} d"
        assert best is not None and found.feasible, label
        assert found.evaluation.time_days <= target, label
        assert found.evaluation.n_gpu == best["n_gpu"], f"{label}: search {found.config} vs reference {best}"
        met += 1
    assert met > 30


def test_cheapest_stops_at_the_fewest_gpus_and_picks_what_one_pass_over_every_candidate_picks(monkeypatch):
    """The visit by increasing GPU count stops after the chunk holding the fewest GPUs that meet the target: with
    tiny chunks (the stop taken early, equal counts split over chunks) it chooses the very configuration one chunk
    over every candidate chooses, and the same reason when nothing meets the target."""
    import lgacc.search.core

    rng = random.Random(34)
    compared = infeasible = 0
    for case in range(40):
        model, hardware, method, parallelism, max_gpus, allow_offload = random_case(rng)
        quick = fastest(model, hardware, method, parallelism, max_gpus=max_gpus, allow_offload=allow_offload, explain=False)
        if not quick.feasible:
            continue
        # every other case asks for a target no configuration meets: the whole visit, the same reason
        target = quick.evaluation.time_days * (rng.uniform(1.0, 6.0) if case % 2 else rng.uniform(0.2, 0.9))
        runs = []
        for chunk in (10**9, 3):
            monkeypatch.setattr(lgacc.search.core, "EVALUATION_CHUNK", chunk)
            runs.append(cheapest(model, hardware, method, parallelism, target, max_gpus=max_gpus,
                                 allow_offload=allow_offload))
        whole, chunked = runs
        label = f"case {case}: {model.name} {method.value} {parallelism.value} target={target:.4g} d"
        assert whole.config == chunked.config and whole.binding == chunked.binding, label
        assert chunked.candidates <= whole.candidates, label
        compared += whole.feasible
        infeasible += not whole.feasible
    assert compared > 10 and infeasible > 3, (compared, infeasible)


def test_reference_visits_every_configuration_within_bounds():
    model = x_model(2)  # d_l = 2, d_a = 1, floor(b_c) = 130
    B = math.floor(model.critical_batch)
    triples = sum(B // (n_b * b_mu) for n_b in range(1, B + 1) for b_mu in range(1, B // n_b + 1))
    total = sum(chunk["n_b"].size for chunk in enumerate_all(model))
    assert total == triples * model.d_l * model.d_a * 2
    chunks = list(enumerate_all(model, max_gpus=1, allow_offload=False))
    assert all((c["n_b"] * c["n_l"] * c["n_a"] <= 1).all() and not c["offload"].any() for c in chunks)


def test_parallelism_spelling():
    assert [p.value for p in Parallelism] == ["None", "Data", "Data + pipe", "Data + tensor", "Pipe + tensor", "3d"]
    assert parse_parallelism("data+pipe") is Parallelism.DATA_PIPE
    assert parse_parallelism("3D") is Parallelism.THREE_D
    assert parse_parallelism("pipe-tensor") is Parallelism.PIPE_TENSOR
    with pytest.raises(UserInputError, match="unknown parallelism"):
        parse_parallelism("pipe")
    assert Parallelism.THREE_D.data and Parallelism.THREE_D.pipe and Parallelism.THREE_D.tensor
    assert not (Parallelism.NONE.data or Parallelism.NONE.pipe or Parallelism.NONE.tensor)


def test_divisors():
    assert divisors(160).tolist() == [1, 2, 4, 5, 8, 10, 16, 20, 32, 40, 80, 160]


X160 = x_model(160)


@pytest.mark.parametrize(
    "parallelism, method, expected",
    [
        # (n_b, n_l, n_a, n_mu, b_mu, offload) of table:parallel_methods_comparison, checked here
        # against the search so that a change to the rules shows up in a unit test too
        ("Data + pipe", "baseline", (3, 160, 1, 201, 4, True)),
        ("3d", "improved", (483, 5, 16, 5, 1, False)),
    ],
)
def test_x160_rows(parallelism, method, expected):
    c = fastest(X160, A100, method, parallelism).config
    assert (c.n_b, c.n_l, c.n_a, c.n_mu, c.b_mu, c.offload) == expected


def test_rules_each_reject_what_they_say():
    model, method = X160, Method.BASELINE

    def masks(par, **c):
        c = {k: np.array([v]) for k, v in c.items()}
        from lgacc.model.evaluator import evaluate_many

        r = evaluate_many(model, A100, method, **c)
        return {k: bool(v[0]) for k, v in rule_masks(model, A100, method, parse_parallelism(par), c, r, max_gpus=None, allow_offload=True, just_below=True).items()}

    # the paper's Data baseline row passes every rule
    row = dict(n_b=483, n_l=1, n_a=1, n_mu=1, b_mu=5, offload=True)
    assert all(masks("Data", **row).values())
    assert not masks("None", **row)["structure"]
    # one micro-batch smaller: the PCIe link shared by offload and InfiniBand is a bottleneck
    assert not masks("Data", **(row | dict(b_mu=4, n_b=604)))["bottleneck"]
    # room for one more micro-batch per instance below the critical batch: not "at or just below"
    assert not masks("Data", **(row | dict(n_b=400, b_mu=3)))["critical batch"]
    assert masks("Data", **(row | dict(n_b=400, b_mu=3, n_mu=2)))["critical batch"]
    assert not masks("Data", **(row | dict(n_b=400, b_mu=3, n_mu=3)))["critical batch"]
    # without offload the state does not fit
    assert not masks("Data", **(row | dict(offload=False)))["memory"]
    # n_l must divide d_l
    assert not masks("Data + pipe", **(row | dict(n_b=1, n_l=3, n_mu=483)))["structure"]
    # offload when the configuration fits anyway is not allowed
    fits = dict(n_b=14, n_l=160, n_a=16, n_mu=172, b_mu=1)
    assert masks("3d", **fits, offload=False)["offload"]
    assert not masks("3d", **fits, offload=True)["offload"]


def test_no_feasible_configuration_names_the_binding_rule():
    result = fastest(X160, A100, "baseline", "Data", max_gpus=1, allow_offload=False)
    assert not result.feasible
    assert result.binding[0].startswith("memory")
    assert "GiB" in result.binding[0]


def test_gpu_budget_is_respected():
    result = fastest(X160, A100, "improved", "3d", max_gpus=1000)
    assert result.feasible and result.evaluation.n_gpu <= 1000


def test_cheapest_meets_the_target_and_one_gpu_less_would_not():
    result = cheapest(X160, A100, "improved", "3d", 180.0)
    assert result.evaluation.time_days <= 180.0
    # the GPU count is within rounding of the perfect-efficiency bound
    bound = result.evaluation.time_days * result.evaluation.efficiency * result.evaluation.n_gpu / 180.0
    assert bound <= result.evaluation.n_gpu <= bound / 0.9
    # one GPU less: the fastest configuration under that budget (another path: no bisection) misses the target
    fewer = fastest(X160, A100, "improved", "3d", max_gpus=result.evaluation.n_gpu - 1, explain=False)
    assert not fewer.feasible or fewer.evaluation.time_days > 180.0
    # by hand, at perfect efficiency: 1e5 steps of 8 b_c d_s p flops with b_c d_s = 2417.49 * 2560 tokens and
    # p = 1.2583e12 is 6.230e24 flop, 231 114 GPU-days at 312 Tflop/s, so 180 d needs at least 1284 GPUs
    assert 1284 <= result.evaluation.n_gpu <= 1284 / 0.9


def test_bad_input():
    with pytest.raises(UserInputError):
        fastest(X160, A100, "baseline", "Data", max_gpus=0)
    with pytest.raises(UserInputError):
        cheapest(X160, A100, "baseline", "Data", -1)
    with pytest.raises(UserInputError):
        fastest(X160, A100, "fast", "Data")


# --- the state partition as a search option (the dotted line of fig:scaling_Ethernet) ---------


def test_improved_without_partition_keeps_the_whole_state_per_instance():
    """``partitioned=False``: the state is ``12 p / (n_l n_a)``, not ``12 p / n_gpu``, and is in the configuration."""
    result = fastest(X160, A100, "improved", "3d", partitioned=False)
    assert result.feasible and result.partitioned is False
    c = result.config
    assert c.partitioned is False and not c.is_partitioned
    assert result.evaluation.memory.state == pytest.approx(12 * X160.p / (c.n_l * c.n_a), rel=1e-12)
    assert c.n_b > 1  # so that the partitioned state 12 p / n_gpu would differ
    default = fastest(X160, A100, "improved", "3d", explain=False)
    assert default.evaluation.memory.state == pytest.approx(12 * X160.p / default.evaluation.n_gpu, rel=1e-12)
    # None is the method's default, and True is the same as the default for the improved method
    explicit = fastest(X160, A100, "improved", "3d", explain=False, partitioned=True)
    assert explicit.config.is_partitioned and explicit.evaluation.time_days == default.evaluation.time_days
    # the explanation's neighbours are evaluated without the partition too
    assert result.binding and all(":" in text for text in result.binding)


def test_partition_option_leaves_the_baseline_alone_and_checks_its_type():
    default = fastest(X160, A100, "baseline", "Data + pipe", explain=False)
    unpartitioned = fastest(X160, A100, "baseline", "Data + pipe", explain=False, partitioned=False)
    assert default.config.n_l == unpartitioned.config.n_l
    assert default.evaluation.time_days == unpartitioned.evaluation.time_days
    with pytest.raises(UserInputError, match="partitioned"):
        fastest(X160, A100, "improved", "3d", partitioned="no")


def test_search_without_partition_matches_the_exhaustive_reference():
    """On random small cases with ``partitioned=False`` the search finds the reference's best time."""
    rng = random.Random(2021)
    feasible = 0
    for case in range(40):
        model, hardware, method, parallelism, max_gpus, allow_offload = random_case(rng)
        method = rng.choice([Method.IMPROVED, Method.IMPROVED, Method.PARTITIONED])
        found = fastest(model, hardware, method, parallelism, max_gpus=max_gpus, allow_offload=allow_offload,
                        explain=case % 4 == 0, partitioned=False)
        best, _ = reference_fastest(model, hardware, method, parallelism, max_gpus=max_gpus,
                                    allow_offload=allow_offload, partitioned=False)
        label = f"case {case}: {model.name} {method.value} {parallelism.value} max_gpus={max_gpus} offload={allow_offload}"
        assert found.feasible == (best is not None), label
        if best is None:
            continue
        feasible += 1
        assert found.config.partitioned is False, label
        assert_obeys_the_papers_rules(model, hardware, method, parallelism, found, max_gpus, allow_offload, label,
                                      partitioned=False)
        assert found.evaluation.time_days == pytest.approx(best["time_days"], rel=1e-9), f"{label}: {found.config} vs {best}"
        assert found.evaluation.memory.state == pytest.approx(
            12 * model.p / (found.config.n_l * found.config.n_a), rel=1e-12), label
        if found.config.n_b > 1:
            # more than the partitioned state 12 p / n_gpu: the option reached the evaluation
            assert found.evaluation.memory.state > 12 * model.p / found.evaluation.n_gpu, label
    assert feasible > 20, feasible


def test_cheapest_without_partition_matches_the_exhaustive_reference():
    rng = random.Random(11)
    met = 0
    for case in range(20):
        model, hardware, _, parallelism, max_gpus, allow_offload = random_case(rng)
        quick = fastest(model, hardware, "improved", parallelism, max_gpus=max_gpus, allow_offload=allow_offload,
                        explain=False, partitioned=False)
        if not quick.feasible:
            continue
        target = quick.evaluation.time_days * rng.uniform(1.0, 6.0)
        found = cheapest(model, hardware, "improved", parallelism, target, max_gpus=max_gpus,
                         allow_offload=allow_offload, partitioned=False)
        best, _ = reference_cheapest(model, hardware, "improved", parallelism, target, max_gpus=max_gpus,
                                     allow_offload=allow_offload, partitioned=False)
        label = f"case {case}: {model.name} {parallelism.value} target={target:.4g} d"
        assert best is not None and found.feasible and found.config.partitioned is False, label
        assert found.evaluation.n_gpu == best["n_gpu"], f"{label}: search {found.config} vs reference {best}"
        met += 1
    assert met > 8, met


def test_doctests_of_the_search_and_evaluator():
    """The examples in the docstrings run (pytest is not configured with --doctest-modules)."""
    import doctest

    import lgacc.search.bounds
    import lgacc.search.rules

    results = [doctest.testmod(module) for module in (lgacc.search.rules, lgacc.search.bounds)]
    assert sum(r.attempted for r in results) >= 1 and sum(r.failed for r in results) == 0


def test_divisibility_assumption_reaches_the_search():
    from lgacc.model.assumptions import Assumptions
    from lgacc.model.transformer import Transformer

    model = Transformer("odd", d_l=7, d_m=512, d_a=8, d_h=64, d_s=512)
    strict = fastest(model, "a100-80gb", "improved", "data+pipe", explain=False)
    assert strict.config.n_l in (1, 7)  # 7 is prime: only 1 and 7 divide it
    relaxed = fastest(model, "a100-80gb", "improved", "data+pipe", explain=False,
                      assumptions=Assumptions(divisible_layers=False))
    assert relaxed.evaluation.time_days <= strict.evaluation.time_days


def test_infeasible_reason_names_the_requested_overhead_cap():
    found = fastest("X160", "a100-80gb", "baseline", "data+tensor", max_overhead=1e-6, allow_offload=False)
    assert not found.feasible
    assert "0.25" not in " ".join(found.binding)
