import sys

from questionbank.files import read_tree
from questions.management.content_path import ContentCommand, concepts_linkable, content_root


class Command(ContentCommand):
    help = "Validate question and concept files; print file:line: message for each problem."

    def handle(self, *args, path=None, **options):
        root = content_root(path)
        if not root.exists():
            self.stderr.write(f"{root}:1: no such file or directory")
            sys.exit(1)
        tree = read_tree(root, known_concepts=concepts_linkable(root))
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
