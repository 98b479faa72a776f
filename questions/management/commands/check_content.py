import sys
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand

from questionbank.files import concept_paths, parse_file, read_tree


class Command(BaseCommand):
    help = "Validate question and concept files; print file:line: message for each problem."

    def add_arguments(self, parser):
        parser.add_argument("path", nargs="?", help="content directory or one file")

    def handle(self, *args, path=None, **options):
        root = Path(path) if path else Path(settings.CONTENT_DIR)
        if not root.exists():
            self.stderr.write(f"{root}:1: no such file or directory")
            sys.exit(1)
        # A lone question file (or a tree without concepts) may link to the shipped concepts.
        shipped = [] if concept_paths(root) else concept_paths(Path(settings.CONTENT_DIR))
        known = {parse_file(p).meta.get("slug") for p in shipped}
        tree = read_tree(root, known_concepts={s for s in known if isinstance(s, str)})
        for problem in tree.problems:
            self.stdout.write(str(problem))
        checked = len(tree.questions) + len(tree.concepts)
        if tree.problems:
            self.stderr.write(f"{len(tree.problems)} problem(s) in {checked} file(s)")
            sys.exit(1)
        if checked == 0:
            self.stderr.write(f"{root}:1: no content files found")
            sys.exit(1)
        self.stdout.write(f"{checked} file(s) OK")
