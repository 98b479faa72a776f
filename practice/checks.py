"""A database that `migrate` cannot bring up to date, said before it tries.

The app's first eleven migrations are one squashed migration (as drills' first two are, and
mocks' two), and the migrations they replace are gone. A database that applied some of them
but not all has no path forward in this release: without this check, `migrate` fails deep in
Django with "Related model ... cannot be resolved"."""

from __future__ import annotations

from django.core.checks import Error, Tags, register
from django.db import DatabaseError, connections
from django.db.migrations.recorder import MigrationRecorder

# The release that still holds the migrations the squash replaced.
LAST_RELEASE_WITH_THEM = "2f6e021"


@register(Tags.database)
def part_way_through_a_squash(app_configs=None, databases=None, **kwargs) -> list[Error]:
    from django.db.migrations.loader import MigrationLoader

    errors = []
    for alias in databases or []:
        connection = connections[alias]
        try:
            applied = set(MigrationRecorder(connection).applied_migrations())
        except DatabaseError:
            continue  # no database yet, or none reachable: `migrate` says so itself
        loader = MigrationLoader(None, ignore_no_migrations=True)
        for key, squash in loader.replacements.items():
            done = [name for name in squash.replaces if name in applied]
            gone = [name for name in squash.replaces if name not in loader.disk_migrations]
            if done and len(done) < len(squash.replaces) and gone:
                missing = ", ".join(
                    f"{app}.{name}" for app, name in squash.replaces if (app, name) not in applied
                )
                errors.append(
                    Error(
                        f"Database {alias!r} applied {len(done)} of the {len(squash.replaces)} "
                        f"migrations that {key[0]}.{key[1]} replaces, and this release no longer "
                        f"has the others ({missing}).",
                        hint=(
                            f"Migrate it first with release {LAST_RELEASE_WITH_THEM}, which "
                            "still has them (git checkout, then manage.py migrate), then with "
                            "this one."
                        ),
                        id="practice.E001",
                    )
                )
    return errors
