#!/usr/bin/env python
"""Django's command-line utility.

A command that meets a database it cannot reach, or one without its tables, stops with one
line saying which (the sentence `python -m config.serve --check` gives), not Django's 90-line
traceback; `--traceback` still shows it.
"""

import os
import sys

# How SQLite and PostgreSQL say a table is missing: a database not migrated yet.
MISSING_TABLE = ("no such table", "does not exist")


def database_error_line(exc: Exception, argv: list[str]) -> str | None:
    """One line for a database error a management command raised: what `--check` says of the
    database when it does not answer, or that its tables are missing (outside `migrate`
    itself); None for any other error, whose traceback is the useful report."""
    from config.serve import _first_line, preflight

    problems = [p for p in preflight() if "database" in p]
    if problems:
        return f"error: {problems[0]}"
    if "migrate" not in argv[1:2] and any(words in str(exc) for words in MISSING_TABLE):
        return (
            f"error: the database is not ready for this command ({_first_line(exc)}); "
            "run `python manage.py migrate` first"
        )
    return None


def main(argv: list[str]) -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    from django.core.management import execute_from_command_line
    from django.db import OperationalError, ProgrammingError

    try:
        execute_from_command_line(argv)
    except (OperationalError, ProgrammingError) as exc:
        line = None if "--traceback" in argv else database_error_line(exc, argv)
        if line is None:
            raise
        print(line, file=sys.stderr, flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
