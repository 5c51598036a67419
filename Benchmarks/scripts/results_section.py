"""One section of Benchmarks/RESULTS.md, written by the script that measures it
(establishment.py, udp_offload.py): the rest of the file is left as it is."""
import os
import re


def write_section(path, heading, section):
    """Replaces the section that starts with `heading` (up to the next "## " heading) by
    `section`, or appends it; nothing else changes."""
    text = open(path).read() if os.path.exists(path) else "# Benchmark results\n"
    pattern = re.compile(r"^" + re.escape(heading) + r"\n.*?(?=^## |\Z)", re.S | re.M)
    if pattern.search(text):
        text = pattern.sub(lambda _: section + "\n", text, count=1).rstrip("\n") + "\n"
    else:
        text = text.rstrip("\n") + "\n\n" + section
    with open(path, "w") as f:
        f.write(text)
