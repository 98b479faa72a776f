"""The PATH the content commands (check_content, load_content, test_content) take: a content
directory or one file, the shipped content when it is left out."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from questionbank.files import concept_paths, parse_file


class ContentCommand(BaseCommand):
    """A command over content files that takes PATH (as Django's LabelCommand takes labels);
    `handle` gets it as `path`, None when left out, and reads it with `content_root`."""

    path_help = "content directory or one file"

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", nargs="?", help=self.path_help)


def content_root(path: str | None) -> Path:
    """The content directory or file a command was given, or the shipped content."""
    return Path(path) if path else Path(settings.CONTENT_DIR)


def concepts_linkable(root: Path) -> set[str]:
    """The concept slugs that files under `root` may link to besides their own: a lone
    question file (or a tree without concepts) may link to the shipped concepts; a tree with
    concepts of its own links to those alone."""
    shipped = [] if concept_paths(root) else concept_paths(Path(settings.CONTENT_DIR))
    slugs = {parse_file(p).meta.get("slug") for p in shipped}
    return {s for s in slugs if isinstance(s, str)}
