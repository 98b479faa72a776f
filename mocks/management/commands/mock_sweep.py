from django.core.management.base import BaseCommand

from mocks.services import mock_sweep


class Command(BaseCommand):
    help = (
        "End the mock sessions whose time is up (answers saved as they stand, submitted and "
        "graded), for sessions no page is polling."
    )

    def handle(self, *args, **options):
        count = mock_sweep()
        self.stdout.write(f"ended {count} mock session(s)")
