"""Shared pytest configuration.

Hypothesis: one profile for the whole suite.  ``deadline=None`` because the brute-force
references are deliberately slow (exact rational arithmetic); ``max_examples=60`` keeps
the property tests to a few seconds; ``derandomize=True`` makes every run draw the same
examples (a red CI run can be reproduced locally) and ``database=None`` keeps no example
database (hypothesis still caches source constants in ``.hypothesis/``, which is
git-ignored).  Set
``HYPOTHESIS_PROFILE=thorough`` for a longer, randomised search.
"""

import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "calnotes",
    deadline=None,
    max_examples=60,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "thorough",
    deadline=None,
    max_examples=2000,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "calnotes"))


@pytest.fixture
def no_kernel(monkeypatch):
    """A run that must be refused before any notebook executes: papermill raises if called."""
    papermill = pytest.importorskip("papermill")

    def refuse(*args, **kwargs):
        raise AssertionError("papermill was called: the run was not refused up front")

    monkeypatch.setattr(papermill, "execute_notebook", refuse)


@pytest.fixture(scope="module")
def driver():
    """Headless Chromium that may open local files (the search tests' small sites); the
    modules that use it skip themselves when chromium, chromedriver or selenium is missing."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--allow-file-access-from-files"):
        options.add_argument(arg)
    browser = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    yield browser
    browser.quit()
