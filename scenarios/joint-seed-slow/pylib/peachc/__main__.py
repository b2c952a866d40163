"""python -m peachc KERNEL_FILE -o OUTPUT.c"""
import sys
import time

# The real PeachPy spends about 6.5 s assembling one NNPACK kernel. This sleep stands for
# that work: a replay of this step costs what the real one does, which is what the
# localization benchmark measures, without loading the CPUs other builds share.
WORK_S = 5.0

from peachc import Function


def parse(path):
    kernel, stages = None, []
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].split()
            if not line:
                continue
            if line[0] == "kernel":
                kernel = line[1]
            elif line[0] == "stage":
                stages.append((line[1], int(line[2])))
            else:
                raise SystemExit("%s: bad line %r" % (path, line))
    return kernel, stages


def generate(kernel, stages):
    fn = Function(kernel)
    for s, (stage, count) in enumerate(stages):
        for i in range(count):
            fn.block(stage)
            fn.emit("x = x * %d + %d;" % (2 * i + 3, s * 100 + i))
            fn.emit("x ^= x >> %d;" % (i % 7 + 1))
    fn.finalize()
    return fn


def main(argv):
    if len(argv) != 4 or argv[2] != "-o":
        raise SystemExit("usage: python -m peachc KERNEL_FILE -o OUTPUT.c")
    kernel, stages = parse(argv[1])
    fn = generate(kernel, stages)
    time.sleep(WORK_S)
    with open(argv[3], "w") as f:
        f.write(fn.c_source(argv[1]))


main(sys.argv)
