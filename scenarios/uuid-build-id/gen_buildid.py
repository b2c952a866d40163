#!/usr/bin/env python3
"""Write buildid.h: the tool's name, version and a build identifier.

The identifier is a fresh uuid4() every time the generator runs, so buildid.h, main.o
and tool differ in every build, at any -j, with any environment: no variable fixes it.
Usage: python3 gen_buildid.py buildid.in buildid.h
"""
import sys
import uuid


def read_fields(path):
    fields = {}
    with open(path) as f:
        for line in f:
            words = line.split("#", 1)[0].split()
            if words:
                fields[words[0]] = words[1]
    return fields


def build_id():
    return str(uuid.uuid4())


def main(argv):
    fields = read_fields(argv[1])
    lines = ['#define TOOL_NAME "%s"' % fields["name"], '#define TOOL_VERSION "%s"' % fields["version"],
             '#define TOOL_BUILD_ID "%s"' % build_id()]
    with open(argv[2], "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(sys.argv)
