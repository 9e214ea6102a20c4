"""``hanamikoji-docs``: the documentation that ships with the package, read from the terminal.

    hanamikoji-docs                 # every page: its name, title and file
    hanamikoji-docs rules           # one page, printed (Markdown; pipe it to a pager or a viewer)
    hanamikoji-docs --path          # the folder that holds them, for a browser or an editor

The pages are the repository's ``docs/`` folder, installed as the data package
``hanamikoji_env.docs`` (links between pages are relative, so they work in the installed folder
too).  The README is the package's index page; this is where its references lead.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from hanamikoji_env.files import shipped_folder


def docs_folder() -> Path:
    """Where the pages are: the installed ``hanamikoji_env.docs``, or a clone's ``docs/``."""
    return shipped_folder("docs", "docs")


def pages() -> dict[str, Path]:
    """Every page by name (its file stem), in order."""
    return {p.stem: p for p in sorted(docs_folder().glob("*.md"))}


def title(page: Path) -> str:
    """A page's first heading."""
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return page.stem


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="hanamikoji-docs", description=__doc__.splitlines()[0])
    parser.add_argument("page", nargs="?", help="a page's name (case does not matter); none: the list")
    parser.add_argument("--path", action="store_true", help="print the folder of the pages (or the page)")
    args = parser.parse_args(argv)
    found = pages()
    if args.page is None:
        if args.path:
            print(docs_folder())
            return 0
        width = max(map(len, found))
        print(f"hanamikoji-env's documentation, in {docs_folder()}:")
        for name, page in found.items():
            print(f"  {name:<{width}}  {title(page)}")
        print("hanamikoji-docs NAME prints a page.")
        return 0
    by_lower = {name.lower(): page for name, page in found.items()}
    page = by_lower.get(args.page.lower().removesuffix(".md"))
    if page is None:
        parser.error(f"no page is named {args.page[:80]!r}; pages: {', '.join(found)}")
    if args.path:
        print(page)
    else:
        sys.stdout.write(page.read_text(encoding="utf-8"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
