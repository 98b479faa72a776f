"""SQLite writers queue on a file lock (config/sqlite) instead of SQLite's sleeping busy wait.

The lock is probed from outside, as another process would meet it: a non-blocking flock on the
same file fails exactly while a connection is writing, and succeeds again once it commits,
rolls back or finishes an autocommit statement. Reads never take it.
"""

import fcntl
import os
import threading

import pytest
from django.contrib.auth.models import User
from django.db import connection, transaction

pytestmark = pytest.mark.skipif(
    connection.vendor != "sqlite", reason="the write lock is part of the SQLite backend only"
)


def lock_is_free() -> bool:
    fd = os.open(f"{connection.settings_dict['NAME']}.write-lock", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return True
    finally:
        os.close(fd)


@pytest.mark.django_db(transaction=True)
def test_a_transaction_holds_the_write_lock_from_begin_to_commit_or_rollback():
    connection.ensure_connection()
    assert connection.vendor == "sqlite" and lock_is_free()
    with transaction.atomic():
        User.objects.create_user("writer", password="writer-Passphrase-1")
        assert not lock_is_free()
    assert lock_is_free(), "a commit must hand the lock on"
    with pytest.raises(RuntimeError), transaction.atomic():
        User.objects.filter(username="writer").update(first_name="W")
        assert not lock_is_free()
        raise RuntimeError("roll back")
    assert lock_is_free(), "a rollback must hand the lock on"
    assert User.objects.get(username="writer").first_name == ""
    User.objects.filter(username="writer").update(first_name="Autocommit")
    assert lock_is_free(), "an autocommit write holds it only for its statement"


@pytest.mark.django_db(transaction=True)
def test_a_writer_waits_for_the_lock_and_a_reader_does_not():
    User.objects.create_user("first", password="first-Passphrase-1")
    connection.ensure_connection()
    fd = os.open(f"{connection.settings_dict['NAME']}.write-lock", os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)  # another process, mid-write
    done: dict[str, object] = {}

    def in_thread(name, work):
        def run():
            try:
                done[name] = work()
            finally:
                connection.close()

        thread = threading.Thread(target=run)
        thread.start()
        return thread

    reader = in_thread("read", lambda: User.objects.filter(username="first").count())
    reader.join(timeout=10)
    assert done.get("read") == 1, "a read waited for the write lock"
    writer = in_thread(
        "write", lambda: User.objects.filter(username="first").update(last_name="Queued")
    )
    writer.join(timeout=0.5)
    assert writer.is_alive() and "write" not in done, "a write went ahead of the lock holder"
    fcntl.flock(fd, fcntl.LOCK_UN)
    os.close(fd)
    writer.join(timeout=10)
    assert done.get("write") == 1
    assert User.objects.get(username="first").last_name == "Queued"
