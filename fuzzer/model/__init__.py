"""The floor every other package of fuzzer stands on, importing nothing else from fuzzer:
the domain's vocabulary (`vocabulary.py`: every enum, `Reason` and `RunKind` included),
what a campaign finds (`found.py`: `Culprit`, `Hazard`, `Finding` and the report's `Model`)
and the host's facts (`host.py`: the CPUs this process may use). Trace, explain, guided,
memory and every report format use these; `fuzzer/report/model.py` builds the report out
of them. `from fuzzer.model import X` is the one way to name each.
"""

from fuzzer.model.found import RATE_SCHEMA, Culprit, Finding, Fix, Hazard, Model, Proof, Rate, SourceLine, WriterProcess
from fuzzer.model.host import available_cpus, cache_dir
from fuzzer.model.vocabulary import (NAMED_KINDS, STABILIZERS, AuditResult, Basis, ExitCode, ExitReason, FindingKind,
                                     FindingStatus, FixStatus, HazardStatus, HazardType, Kind, LineCause, LineStatus,
                                     NotTried, Reason, RunKind, RunStatus, SettingSource, Stabilizer, Unfinished,
                                     Verdict)

__all__ = ["NAMED_KINDS", "RATE_SCHEMA", "STABILIZERS", "AuditResult", "Basis", "Culprit", "ExitCode", "ExitReason",
           "Finding", "FindingKind", "FindingStatus", "Fix", "FixStatus", "Hazard", "HazardStatus", "HazardType", "Kind",
           "LineCause", "LineStatus", "Model", "NotTried", "Proof", "Rate", "Reason", "RunKind", "RunStatus",
           "SettingSource", "SourceLine", "Stabilizer", "Unfinished", "Verdict", "WriterProcess", "available_cpus", "cache_dir"]
