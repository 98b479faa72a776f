"""`manage.py grant_instructor USERNAME [--revoke]`: let a user author questions and review
grades (or take that away)."""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from accounts.instructors import instructor_grant, instructor_revoke


class Command(BaseCommand):
    help = "Add a user to the instructors group (or remove them with --revoke)."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--revoke", action="store_true", help="remove instead of add")

    def handle(self, *args, username: str, revoke: bool, **options):
        User = get_user_model()
        try:
            user = User.objects.get(username=username)
        except User.DoesNotExist:
            raise CommandError(f"no user named {username!r}") from None
        if revoke:
            changed = instructor_revoke(user)
            verb = "is no longer" if changed else "was not"
        else:
            changed = instructor_grant(user)
            verb = "is now" if changed else "was already"
        self.stdout.write(f"{username} {verb} an instructor")
