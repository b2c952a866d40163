"""The step audit's terminal lines: counts that add up, rows told apart, the rotation shown."""

from fuzzer.model import AuditedStep, AuditResult, AuditSummary
from fuzzer.report.audit_text import audit_lines

CC = ": && /usr/bin/cc -std=c89 -O2 -Wall -o {} -c {}"


def step(command, result, outputs=(), last_audit=""):
    return AuditedStep(f"{command} #0", command, ".", list(outputs), result, "why", 5, 1.0, last_audit)


def summary(steps):
    audited = sum(s.result in (AuditResult.STABLE, AuditResult.VARIES) for s in steps)
    left = sum(s.result == AuditResult.LEFT for s in steps)
    return AuditSummary(0.5, len(steps), audited, 0, left, "", 2, 1.0, 1.0, steps)


def test_the_summary_counts_the_steps_that_could_not_be_replayed():
    steps = [step("gen", AuditResult.STABLE, ["a"]), step("nc host", AuditResult.NOT_REPLAYABLE, ["b"])]
    assert "1 of 2 steps replayed alone, 0 varied, 1 not replayable, 0 left" in audit_lines(summary(steps))[1]


def test_rows_whose_commands_look_alike_name_the_file_they_stand_for():
    steps = [step(CC.format("a.o", "a.c"), AuditResult.STABLE, ["build/a.o"]),
             step(CC.format("b.o", "b.c"), AuditResult.STABLE, ["build/b.o", "build/b.d"])]
    rows = audit_lines(summary(steps))[2:]
    assert "for build/a.o; in ." in rows[0]
    assert "for build/b.o and 1 more; in ." in rows[1]


def test_the_steps_that_need_a_reader_are_listed_before_the_stable_ones():
    steps = [step(f"cc {i}", AuditResult.STABLE, [f"{i}.o"]) for i in range(30)]
    steps += [step("cmake ..", AuditResult.NOT_REPLAYABLE, ["build.ninja"]), step("gen", AuditResult.VARIES, ["g"])]
    rows = audit_lines(summary(steps))[2:]
    assert rows[0].startswith("  [not-replayable] cmake ..") and rows[1] == "     why"
    assert rows[2].startswith("  [varies] gen") and rows[4].startswith("  [stable] cc 0")
    assert rows[-1] == "  and 12 more (the JSON report lists every step)"


def test_the_steps_left_for_later_show_when_they_were_last_audited():
    steps = [step("gen", AuditResult.STABLE, ["a"]),
             step("old1", AuditResult.LEFT, ["b"], "2026-12-01T04:50:06"),
             step("old2", AuditResult.LEFT, ["c"], "2026-12-01T04:50:07"),
             step("new", AuditResult.LEFT, ["d"])]
    last = audit_lines(summary(steps))[-1]
    assert last == ("  left for later campaigns: 3 steps (1 never audited; "
                    "2 last audited 2026-12-01T04:50:06 to 2026-12-01T04:50:07)")
    assert not any("old1" in line for line in audit_lines(summary(steps)))


def test_the_markdown_summary_has_the_audit_and_its_odd_steps():
    from fuzzer.report import markdown
    from fuzzer.model import Report

    steps = [step("gen | sort", AuditResult.VARIES, ["a"]), step("cp a b", AuditResult.STABLE, ["b"]),
             step("old", AuditResult.LEFT, ["c"], "2026-12-01T04:50:06")]
    text = markdown.render(Report("make", "unreproducible", [], 0, [], audit=summary(steps)))
    section = text[text.index("### Step audit"):]
    assert "2 of 3 steps replayed alone" in section
    assert "- **varies**: gen \\| sort (in .): why" in section and "cp a b" not in section
    assert "left for later campaigns: 1 step (1 last audited 2026-12-01T04:50:06)" in section


def test_two_runs_of_one_command_in_one_directory_are_told_apart():
    """Meson runs its compiler sanity check twice in meson-private: one row per run."""
    check = "cc sanitycheckc.c -o sanitycheckc.exe"
    steps = [AuditedStep(f"{check} (in private) #{n}", check, "private", [], result, "why")
             for n, result in ((0, AuditResult.NOT_REPLAYABLE), (1, AuditResult.STABLE))]
    steps.append(step("gen", AuditResult.STABLE, ["a"]))
    rows = [row for row in audit_lines(summary(steps))[2:] if row.startswith("  [")]
    assert [row.split("(")[-1].split(";")[0] for row in rows] == ["in private, run #1", "in private, run #2", "for a"]
