#!/usr/bin/env python3
"""Render a (very) small subset of Markdown to HTML.

The page is written to a temporary file next to the build directory and moved
into html/ in one step, so html/ only ever holds complete pages.
Usage: python3 render.py pages/NAME.md html/NAME.html"""
import html, os, re, sys, time


def inline(text):
    return re.sub(r"`([^`]*)`", r"<code>\1</code>", html.escape(text))

src, dst = sys.argv[1], sys.argv[2]
with open(src) as f:
    # stands in for syntax highlighting: 50 ms per code span
    time.sleep(0.05 * (f.read().count("`") // 2))
body, in_list = [], False
with open(src) as f:
    for line in f.read().splitlines():
        if line.startswith("- "):
            if not in_list:
                body.append("<ul>")
                in_list = True
            body.append("<li>%s</li>" % inline(line[2:]))
            continue
        if in_list:
            body.append("</ul>")
            in_list = False
        if line.startswith("# "):
            body.append("<h1>%s</h1>" % inline(line[2:]))
        elif line:
            body.append("<p>%s</p>" % inline(line))
if in_list:
    body.append("</ul>")
tmp = os.path.basename(dst) + ".tmp"
with open(tmp, "w") as f:
    f.write("<!DOCTYPE html>\n<html><body>\n%s\n</body></html>\n" % "\n".join(body))
os.replace(tmp, dst)
