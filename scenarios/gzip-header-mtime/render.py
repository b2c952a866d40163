"""Render one text page as HTML: the same bytes for the same text."""
import html
import os
import sys

source, target = sys.argv[1], sys.argv[2]
with open(source, encoding="utf-8") as f:
    lines = f.read().splitlines()
os.makedirs(os.path.dirname(target), exist_ok=True)
with open(target, "w", encoding="utf-8") as out:
    out.write(f"<h1>{html.escape(lines[0])}</h1>\n")
    out.writelines(f"<p>{html.escape(line)}</p>\n" for line in lines[1:] if line)
