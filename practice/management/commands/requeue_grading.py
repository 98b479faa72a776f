from django.core.management.base import BaseCommand

from practice.services import grading_requeue_stale


class Command(BaseCommand):
    help = "Re-queue submissions stuck in queued/grading (a worker that crashed mid-grade)."

    def add_arguments(self, parser):
        parser.add_argument("--older-than", type=int, default=120, help="seconds (default 120)")

    def handle(self, *args, older_than: int, **options):
        count = grading_requeue_stale(older_than_s=older_than)
        self.stdout.write(f"re-queued {count} submission(s)")
