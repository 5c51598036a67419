#!/usr/bin/env python3
"""Fails naming every public symbol declared in this package's sources without a doc comment.

    docs_coverage.py SOURCES_DIR MODULE.symbols.json...

Reads symbol graphs (swift-symbolgraph-extract output). A symbol counts when it has a source
location under SOURCES_DIR: members the compiler synthesizes or that come from protocol
extensions of other modules have none, so they are not ours to document. A doc comment inherited
from another module (say, `Element` of an AsyncSequence) does not count as one of our own.
"""

import json
import pathlib
import sys
import urllib.parse


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    sources = pathlib.Path(argv[0]).resolve()
    missing, total = [], 0
    for graph_path in argv[1:]:
        graph = json.loads(pathlib.Path(graph_path).read_text())
        module = graph["module"]["name"]
        documented = 0
        counted = 0
        for symbol in graph["symbols"]:
            location = symbol.get("location")
            if not location:
                continue
            file = pathlib.Path(urllib.parse.unquote(urllib.parse.urlparse(location["uri"]).path))
            if sources not in file.resolve().parents:
                continue
            counted += 1
            comment = symbol.get("docComment")
            own = comment and comment.get("module", module) == module and any(
                line["text"].strip() for line in comment.get("lines", []))
            if own:
                documented += 1
            else:
                line = location.get("position", {}).get("line", 0) + 1
                name = ".".join(symbol["pathComponents"])
                missing.append(f"{file.relative_to(sources.parent)}:{line}: {module}.{name} has no doc comment")
        total += counted
        share = 100.0 * documented / counted if counted else 100.0
        print(f"doc comments: {module} {documented}/{counted} public symbols ({share:.1f}%)")
    for entry in sorted(missing):
        print(entry, file=sys.stderr)
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
