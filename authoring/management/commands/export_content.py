from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from authoring.services import content_export


class Command(BaseCommand):
    help = (
        "Write every published question (its current revision, byte for byte) and every "
        "concept note to DIR/questions/<slug>.md and DIR/concepts/<slug>.md; load_content DIR "
        "afterwards creates no revision."
    )

    def add_arguments(self, parser):
        parser.add_argument("dir", help="the directory to write into (created if missing)")

    def handle(self, *args, dir: str, **options):
        try:
            written = content_export(root=Path(dir))
        except OSError as exc:
            raise CommandError(
                f"cannot write under {dir}: {exc.strerror or exc}; give a directory you can write"
            ) from None
        self.stdout.write(f"wrote {len(written)} file(s) under {dir}")
