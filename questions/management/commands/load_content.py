from django.core.management.base import CommandError

from questions.management.content_path import ContentCommand, content_root
from questions.services import content_load


class Command(ContentCommand):
    help = "Validate and store question and concept files (idempotent; edits become revisions)."

    def handle(self, *args, path=None, **options):
        root = content_root(path)
        if not root.exists():
            raise CommandError(f"{root} does not exist")
        report = content_load(root=root)
        if report.problems:
            for problem in report.problems:
                self.stderr.write(str(problem))
            raise CommandError(f"{len(report.problems)} problem(s); nothing was loaded")
        if not (report.created or report.unchanged or report.behind or report.concepts_saved):
            # As check_content says: a path holding no content files is a mistyped path.
            raise CommandError(f"{root}: no content files found; give content/ or a .md file")
        for label in report.created:
            self.stdout.write(f"published {label}")
        for label in report.behind:
            self.stdout.write(
                f"kept back {label}: the file holds an older revision than the database; "
                "run export_content to bring the newer one into the files"
            )
        self.stdout.write(
            f"{len(report.created)} new revision(s), {len(report.unchanged)} unchanged, "
            f"{len(report.concepts_saved)} concept(s) saved"
        )
