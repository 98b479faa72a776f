from django.core.management.base import BaseCommand, CommandError

from practice.services import grading_requeue_stale

# A year is far past any stuck grade; much larger ages overflow the cutoff date.
MAX_OLDER_THAN_S = 365 * 24 * 3600


class Command(BaseCommand):
    help = "Re-queue submissions stuck in queued/grading (a worker that crashed mid-grade)."

    def add_arguments(self, parser):
        parser.add_argument("--older-than", type=int, default=120, help="seconds (default 120)")

    def handle(self, *args, older_than: int, **options):
        # A negative age would re-queue submissions a live worker is grading right now.
        if not 0 <= older_than <= MAX_OLDER_THAN_S:
            raise CommandError(f"--older-than takes seconds from 0 to {MAX_OLDER_THAN_S}")
        count = grading_requeue_stale(older_than_s=older_than)
        self.stdout.write(f"re-queued {count} submission(s)")
