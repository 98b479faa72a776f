import os
from importlib import import_module

from django.conf import settings
from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_wsgi_application()
# The URL conf, and with it every view module, is imported as the process starts rather than
# inside its first request: that import is most of a second the first visitor would wait.
import_module(settings.ROOT_URLCONF)
