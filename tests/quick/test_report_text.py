"""What the human formats show of long commands and failed runs: one readable line per
command (the JSON keeps the recipe whole), the first error lines of a failed run."""

from __future__ import annotations

import json

from hypothesis import given
from msgspec import structs
from hypothesis import strategies as st

from fuzzer.escaping import COMMAND_CHARS, one_line, program, quoted_commands_cut
from fuzzer.execute.logs import SKIPPED, failure_summary, log_tail
from fuzzer.report import html, junit, markdown, text
from fuzzer.report.json_format import render as render_json

from report_samples import unreproducible

# a recipe of the kind a generated Makefile has: one shell script for one target
RECIPE = "\n".join(f"if test -f tests/t{i}.log; then echo 'PASS: t{i}' >> tests/t{i}.trs; else exit 1; fi; \\"
                   for i in range(60))
LD = ["/usr/bin/ld", "-plugin", "/usr/lib/gcc/x86_64-linux-gnu/12/liblto_plugin.so", *(f"-L/usr/lib/dir{i}" for i in
                                                                                       range(36)), "-o", "app"]
# what a -j build's log looks like when the link fails: the reason, then other jobs' noise
LINK_FAILURE = "\n".join([
    "gcc -c a.c", "/usr/bin/ld: cannot find -lmissing: No such file or directory",
    "collect2: error: ld returned 1 exit status", "make[1]: *** [Makefile:9: app] Error 1",
    *(f"b{i}.c:3:5: warning: unused variable 'x{i}' [-Wunused-variable]" for i in range(30)),
    "make[1]: Leaving directory '/ws/src'", "make: *** [Makefile:4: all] Error 2",
])


def long_report():
    report = unreproducible()
    culprit = structs.replace(report.culprits[0], command=RECIPE, writer=LD, other_step=RECIPE,
                                  evidence=f"`{RECIPE}` wrote tests/t1.trs before its reader")
    hazard = structs.replace(report.hazards[0], reader=RECIPE, writer=RECIPE,
                                 evidence=f"they ran in opposite orders (`{RECIPE}` first in run 2)")
    failed = [structs.replace(r, log_tail=LINK_FAILURE) if r.status != "ok" else r for r in report.runs]
    return structs.replace(report, culprits=[culprit], hazards=[hazard], runs=failed)


def test_text_markdown_and_junit_cut_every_command_to_one_line():
    report = long_report()
    for rendered in (text.render(report), markdown.render(report), junit.render(report)):
        assert "PASS: t0" in rendered and "PASS: t59" not in rendered  # shown, and cut
        assert max(len(line) for line in rendered.splitlines() if "PASS: t0" in line) < 2 * COMMAND_CHARS + 200
    assert json.loads(render_json(report))["culprits"][0]["command"] == RECIPE  # the JSON keeps it whole


def test_html_folds_long_command_lines_behind_the_program_name():
    page = html.render(long_report())
    # the cause's step and its raced step, and the hazard's reader and writer
    summary = f'<details class="command"><summary><code>{program(RECIPE)}</code> … ({len(RECIPE)} characters)</summary>'
    assert page.count(summary) == 4
    assert "PASS: t59" in page  # folded, not dropped


def test_a_failed_run_is_summarised_by_its_first_error_lines():
    report = long_report()
    summary = text.render(report).split("failed runs", 1)[1].split("\n\n", 1)[0]
    assert "ld: cannot find -lmissing" in summary and "Leaving directory" not in summary
    assert "warning: unused variable" not in summary
    assert failure_summary("compiling\nlinking\ndone") == ["compiling", "linking", "done"]  # no error line: the end
    assert "first error lines:" in junit.render(report) and "ld: cannot find" in html.render(report)


def test_the_stored_tail_keeps_the_first_error_lines_that_came_before_it(tmp_path):
    log = tmp_path / "run.log"
    log.write_text(LINK_FAILURE + "\n")
    tail = log_tail(log).splitlines()
    assert tail[0] == "/usr/bin/ld: cannot find -lmissing: No such file or directory" and SKIPPED in tail
    assert tail[-1] == "make: *** [Makefile:4: all] Error 2" and len(tail) <= 20 + 5 + 1
    log.write_text("ok\n" * 3)
    assert log_tail(log) == "ok\nok\nok"


@given(st.text(max_size=400))
def test_one_line_is_one_line_and_says_how_much_it_cut(command):
    line = one_line(command)
    assert "\n" not in line and len(line) <= COMMAND_CHARS + 40
    assert line == " ".join(command.split()) or "characters)" in line


def test_quoted_commands_are_cut_and_prose_is_kept():
    cut = quoted_commands_cut(f"`{RECIPE}` wrote x before `cc -c y.c` read it")
    assert cut.endswith("wrote x before `cc -c y.c` read it") and "\n" not in cut
    assert program("/usr/bin/ld -o app a.o") == "ld" and program("") == ""
