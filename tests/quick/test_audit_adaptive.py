"""The step audit's adaptive replays (fuzzer/explain/audit_replays.py) and localization's
taking over of the roots it classified (audit_run.taken_over), with fake replayers."""

from __future__ import annotations

import time
from importlib import import_module
from types import SimpleNamespace

from test_audit_plan import chain

from fuzzer.execute.replay_slots import in_slots
from fuzzer.execute.step_replay import REPLAYS, ReplayOutcome, outputs_digest
from fuzzer.explain import audit, audit_replays
from fuzzer.explain.audit_run import taken_over
from fuzzer.explain.budget import UNLIMITED, Budget
from fuzzer.explain import stabilizers
from fuzzer.explain.classify import Context, Earlier
from fuzzer.explain.ranking import rank
from fuzzer.explain.traced import TracedPair
from fuzzer.explain.writer import ReplayTargets
from fuzzer.model import Culprit, Kind
from fuzzer.observe import Entry, Manifest
from fuzzer.trace.graph import RootCandidate
from fuzzer.trace.synthetic import synthetic_trace

classify_module = import_module("fuzzer.explain.classify")  # fuzzer.explain.classify is also the function
OUTPUTS = ("a.c", "b.c", "a.o", "app", "build.log")


class Replayer:
    """Gives the traced build's bytes, or other bytes for a step that varies."""

    def __init__(self, call, varies: bool, log: list):
        self.call, self.varies, self.log = call, varies, log

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass

    def replay(self, variation, times=REPLAYS, seen=None):
        self.log.append((self.call.compared, times))
        digest = outputs_digest(self.call.compared, lambda rel: ("other-" if self.varies else "d-") + rel)
        return ReplayOutcome((digest,) * times, (0,) * times, 0)


def audited(varying: str, budget: Budget):
    trace = synthetic_trace(chain())
    plan = audit.plan(trace, {"app", "build.log"}, 1.0, (), {})
    targets = ReplayTargets(trace, trace, 1)
    record = SimpleNamespace(manifest=Manifest({p: Entry("file", "d-" + p, size=1) for p in OUTPUTS}),
                             perturbation=SimpleNamespace(describe=lambda: "jobs=1"))
    log: list = []
    context = Context(record, record, lambda c: Replayer(targets.of(c).call, varying in c.outputs, log))
    steps = audit_replays.Steps(plan.chosen, targets, record, SimpleNamespace(), budget, 0.0)
    return plan, steps, context, log


def classified(monkeypatch, contexts: list | None = None):
    handed = [] if contexts is None else contexts
    monkeypatch.setattr(audit_replays, "classify", lambda candidate, context: handed.append(context) or Culprit(
        command=candidate.step.command, argv=[], cwd=".", outputs=list(candidate.outputs), kind=Kind.INTRINSIC,
        stabilized_by=["PYTHONHASHSEED"], evidence="it becomes stable with PYTHONHASHSEED"))


def test_classify_opens_with_the_audits_replays_of_the_step_it_saw_vary(monkeypatch):
    contexts: list = []
    classified(monkeypatch, contexts)
    plan, steps, context, log = audited("b.c", UNLIMITED)
    in_slots(plan.chosen, [context], steps.first)
    (handed,) = contexts
    (row,) = [r for r in map(steps.row, plan.chosen) if r.outputs == ["b.c"]]
    assert handed.earlier.outcome.digests == (outputs_digest(("b.c",), lambda rel: "other-" + rel),)
    assert len(handed.earlier.outcome.digests) == row.replays == 1


def test_classify_replays_no_baseline_when_the_audits_replays_already_vary(monkeypatch):
    """Same argv, cwd, environment and tree: the audit's two different outputs are the plain
    replays' answer, so classify goes straight to the stabiliser search."""
    trace = synthetic_trace(chain())
    gen_b = next(s for s in trace.steps if s.command == "python3 gen_b.py")
    candidate = RootCandidate(ref=gen_b, div=gen_b, outputs=("b.c",), explains=(), input_differences=(), chain=(),
                              failed=False)
    call = ReplayTargets(trace, trace, 1).of(candidate).call
    log: list = []
    searched: list = []
    monkeypatch.setattr(classify_module.stabilizers, "search", lambda replayer, *a: searched.append(a[-1]) or
                        stabilizers.StabilizerSearch((), (), 0, 0.0, ()))
    record = SimpleNamespace(manifest=None, perturbation=SimpleNamespace(describe=lambda: "jobs=1"))
    earlier = Earlier(ReplayOutcome(("x", "y"), (0, 0), 0), per_replay_s=7.0)
    culprit = classify_module.classify(candidate, Context(record, record, lambda c: Replayer(call, True, log),
                                                          earlier=earlier))
    assert culprit.kind == Kind.INTRINSIC and searched == [7.0]  # sized by the audit's replays
    assert sum(times for _, times in log) == 0


def test_one_replay_each_then_the_stable_ones_topped_up_cheapest_first(monkeypatch):
    classified(monkeypatch)
    plan, steps, context, log = audited("b.c", UNLIMITED)
    in_slots(plan.chosen, [context], steps.first)
    assert [times for _, times in log] == [1] * len(plan.chosen)  # the first pass: one replay each
    more = steps.topped_up()
    assert ("b.c",) not in [a.candidate.outputs for a in more]  # the varying one is classified, not topped up
    in_slots(sorted(more, key=lambda a: a.candidate.duration), [context], steps.more)
    rows = {r.outputs[0]: r for r in map(steps.row, plan.chosen)}
    assert rows["b.c"].result == "varies" and rows["b.c"].replays == 1
    assert "2 distinct outputs in 1 replay alone and the traced build" in rows["b.c"].detail
    assert all(rows[p].result == "stable" and rows[p].replays == REPLAYS for p in ("a.c", "a.o", "app", "build.log"))
    assert "any variation left is below 46% of replays (95%" in rows["a.c"].detail and "3/k" in rows["a.c"].detail
    (culprit,) = steps.classified.values()
    assert culprit.stabilized_by == ["PYTHONHASHSEED"] and culprit.evidence.startswith("step audit: 2 distinct outputs")
    assert steps.short_note() == ()


def test_a_budget_that_holds_only_the_first_pass_leaves_the_long_step_with_one_replay_and_says_so(monkeypatch):
    classified(monkeypatch)
    # gen_b's replay is 7 s, the others' 1 s or less: its four more (28 s) do not fit, theirs do
    plan, steps, context, log = audited("nothing", Budget(time.monotonic() + 20, 20, "--localize-budget"))
    in_slots(plan.chosen, [context], steps.first)
    in_slots(sorted(steps.topped_up(), key=lambda a: a.candidate.duration), [context], steps.more)
    rows = {r.outputs[0]: r for r in map(steps.row, plan.chosen)}
    assert rows["b.c"].replays == 1 and "below 95% of replays" in rows["b.c"].detail
    assert all(rows[p].replays == REPLAYS for p in ("a.c", "a.o", "app", "build.log"))
    (note,) = steps.short_note()
    assert "1 stable step(s) got fewer than 5 replays" in note and "20 s, --localize-budget" in note


def test_localization_takes_over_the_audits_root_with_its_evidence_and_replays_only_the_rest():
    trace = synthetic_trace(chain())
    gen_a, gen_b = (next(s for s in trace.steps if s.command == c) for c in ("python3 gen_a.py", "python3 gen_b.py"))
    roots = [RootCandidate(ref=s, div=s, outputs=(out,), explains=("app",), input_differences=(),
                           chain=("app", out), failed=False) for s, out in ((gen_a, "a.c"), (gen_b, "b.c"))]
    mine = Culprit(command=gen_b.command, argv=[], cwd=".", outputs=["b.c", "b.h"], kind=Kind.INTRINSIC,
                   stabilized_by=["ASLR"], evidence="step audit: 2 distinct outputs in 1 replay alone")
    taken, rest = taken_over(rank(roots, (), set()), {audit.step_identity(gen_b): mine},
                             "localization found it as a root of the two traced builds too")
    assert [r.root.ref.command for r in rest] == ["python3 gen_a.py"]
    ((root, culprit),) = taken
    assert root.root.ref is gen_b and culprit.stabilized_by == ["ASLR"] and culprit.chain == ["app", "b.c"]
    assert culprit.outputs == ["b.c"]  # what the builds differ in, not every output the audit compared
    assert culprit.evidence.startswith("step audit: 2 distinct outputs in 1 replay alone\n")
    assert "a root of the two traced builds too, and did not replay it again" in culprit.evidence
    assert culprit.evidence.endswith("chain: app ← b.c")


def test_the_audits_traced_reference_serves_until_a_root_needs_this_workspaces_tree(monkeypatch):
    import fuzzer.explain as explain

    audit_reference, own_reference = SimpleNamespace(name="audit's"), SimpleNamespace(name="own")
    traced: list = []
    monkeypatch.setattr(explain.strace, "STRACE", SimpleNamespace(problem=lambda: None))
    monkeypatch.setattr(explain, "_from_audit", lambda builds, comparison, executor, audit: None)
    monkeypatch.setattr(explain, "trace_pair", lambda builds, comparison, executor, reference: TracedPair(
        reference or own_reference, None, ()))
    monkeypatch.setattr(explain, "trace_reference", lambda builds, executor: traced.append(1) or own_reference)
    calls: list = []

    def localized(builds, comparison, executor, budget, evidence, pair, audited, borrowed, tree_here):
        calls.append((pair.reference.name, borrowed, tree_here))
        return None if not tree_here and needs_tree else "localization"

    monkeypatch.setattr(explain, "_localize", localized)
    lent: list = []
    executor = SimpleNamespace(reuse_tree=lambda record, kept: lent.append((record.name, kept)) or True)
    outcome = SimpleNamespace(classified={"gen (in .) #0": object()}, reference=audit_reference, kept_tree=None)
    for needs_tree, expected in ((False, [("audit's", True, False)]),
                                 (True, [("audit's", True, False), ("own", False, True)])):
        calls.clear()
        assert explain.localize(None, None, executor, UNLIMITED, None, outcome) == "localization"
        assert calls == expected
    assert traced == [1]  # traced again only for the root that needed replays
    calls.clear()
    explain.localize(None, None, executor, UNLIMITED, None,
                     SimpleNamespace(classified={}, reference=audit_reference, kept_tree=None))
    assert calls == [("own", False, True)]  # an audit that classified nothing and kept no tree lends nothing
    assert not lent
    for classified in ({}, {"gen (in .) #0": object()}):  # its tree set aside: it serves every root's replays
        calls.clear()
        kept = SimpleNamespace(classified=classified, reference=audit_reference, kept_tree="kept")
        assert explain.localize(None, None, executor, UNLIMITED, None, kept) == "localization"
        assert calls == [("audit's", True, True)] and lent[-1] == ("audit's", "kept")
    assert traced == [1]
