"""Down to the line: for an intrinsic culprit whose process is a Python program, the
first line of the generator's code where two replays part, and why (issue 33).

`injected/sitecustomize.py` is the tracer a replay loads through its environment;
`streams.py` reads and compares what it recorded (pure); `causes.py` classifies the
point found (pure); `replays.py` runs the traced replays.
"""
