"""The floor every other package of fuzzer stands on, importing nothing else from fuzzer:
the domain's vocabulary (`vocabulary.py`: every enum, `Reason` and `RunKind` included),
what a campaign finds (`found.py`: `Culprit`, `Hazard`, `Finding` and the report's `Model`),
the report made of them (`report.py`: `Report`, its runs, artifacts, packages, the audit)
and the host's facts (`host.py`: the CPUs this process may use). Trace, explain, guided,
memory, findings, rates and every report format use these. `from fuzzer.model import X`
is the one way to name each.
"""

from fuzzer.model.found import (RATE_SCHEMA, Culprit, Finding, Fix, Hazard, KeyEvidence, Model, Proof, Rate,
                                SourceLine, UnnamedFile,
                                WriterProcess)
from fuzzer.model.host import available_cpus, cache_dir
from fuzzer.model.report import (REPORT_SCHEMA, ArtifactFinding, AuditedStep, AuditSummary, AxisBound, AxisScope,
                                 Bookkeeping, BookkeepingFile, CutShort, InsideSummary, MetadataStabilizer, Origin,
                                 PackageFile, Report, RunSummary, VariantSummary)
from fuzzer.model.vocabulary import (NAMED_KINDS, STABILIZERS, AuditResult, Basis, ExitCode, ExitReason, FindingKind,
                                     FindingStatus, FixStatus, HazardStatus, HazardType, Kind, LineCause, LineStatus,
                                     NoStep, NotTried, Reason, RunKind, RunStatus, SettingSource, Stabilizer,
                                     Unfinished, Verdict)

__all__ = ["NAMED_KINDS", "RATE_SCHEMA", "REPORT_SCHEMA", "STABILIZERS", "ArtifactFinding", "AuditedStep",
           "AuditResult", "AuditSummary", "AxisBound", "AxisScope", "Basis", "Bookkeeping", "BookkeepingFile",
           "Culprit", "CutShort", "ExitCode", "ExitReason", "Finding", "FindingKind", "FindingStatus", "Fix",
           "FixStatus", "Hazard", "HazardStatus", "HazardType", "InsideSummary", "KeyEvidence", "Kind", "LineCause",
           "LineStatus", "MetadataStabilizer", "Model", "NoStep", "NotTried", "Origin", "PackageFile", "Proof", "Rate",
           "Reason", "Report", "RunKind", "RunStatus", "RunSummary", "SettingSource", "SourceLine", "Stabilizer",
           "Unfinished", "UnnamedFile", "VariantSummary", "Verdict", "WriterProcess", "available_cpus", "cache_dir"]
