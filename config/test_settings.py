"""Settings for the test suite: the app's settings, with a fast password hasher.

PBKDF2 at Django's 1.5M iterations costs about 0.3 s a password here, and the suite makes
dozens of users; what the tests check of passwords (sign-up, log-in, lock-out) does not depend
on the hash's cost. Production hashing is unchanged: nothing outside the tests imports this.
The login-flood test runs its server on `config.settings`, since its point is the real cost.
"""

from config.settings import *  # noqa: F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
